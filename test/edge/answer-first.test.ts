/**
 * A call's answer and its record (functions/adapters/local/sqlite-answer-first.ts), seen from outside the
 * shipped server: `agenthost start` as its own process, a fake model on loopback, and a second
 * connection to the platform's database file that holds SQLite's write lock while the model
 * answers. A write the platform then commits waits for the lock (and, SQLite's busy wait being
 * synchronous, so does everything else in its process), so the moment an answer arrives tells
 * whether it waited for its record:
 *
 * - a call alone in flight is answered while its record still waits, and the record is there for
 *   the next request once the lock is released;
 * - calls in flight together are answered only after their records commit (the group commit keeps
 *   sharing one commit among them).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { SQLITE_FILE } from '../../functions/platform/local-deps.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type RunningPlatform, startPlatformProcess } from '../helpers/process.ts';

/** How long a test holds the write lock at most: well under the platform's 10 s busy timeout. */
const HOLD_MS = 3_000;

describe('answer first: a lone call is answered before its record commits, concurrent ones after', () => {
  let fake: FakeLlmProviders;
  let dataDir: string;
  let platform: RunningPlatform;
  let key: string;
  let lock: DatabaseSync;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${platform.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {}, at: performance.now() };
  };

  /** From now on the model holds each request until the returned function is called. */
  const holdModelAnswers = (): (() => void) => {
    fake.reset();
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'answered' };
    });
    return open;
  };

  /** Waits until the model has received `n` requests in all. */
  const modelReached = async (n: number) => {
    for (let i = 0; i < 400 && fake.calls.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(fake.calls.length, n, 'the calls reached the model');
  };

  const usageLogIds = async (): Promise<string[]> => {
    const page = await api('GET', '/usage/logs?limit=100');
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return (page.body.logs as { request_id: string }[]).map((l) => l.request_id);
  };

  before(async () => {
    fake = await startFakeLlm();
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-answer-first-'));
    key = generateApiKey();
    platform = await startPlatformProcess({
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: key,
      PLATFORM_BOOTSTRAP_TIER: 'pro',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    });
    const published = await api('POST', '/agents', {
      name: 'echo',
      description: 'Answers.',
      supported_providers: ['openai'],
      prompt_template: 'Say {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    lock = new DatabaseSync(join(dataDir, SQLITE_FILE), { timeout: 10_000 });
  });
  after(async () => {
    if (lock.isOpen && lock.isTransaction) lock.exec('ROLLBACK');
    lock.close();
    await platform.stop();
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Holds the write lock from when `taken` resolves until `release` is called (or HOLD_MS pass). */
  function holdWriteLock() {
    lock.exec('BEGIN IMMEDIATE');
    const takenAt = performance.now();
    let releasedAt = Number.POSITIVE_INFINITY;
    const release = () => {
      if (!lock.isTransaction) return;
      lock.exec('ROLLBACK');
      releasedAt = performance.now();
    };
    const timer = setTimeout(release, HOLD_MS);
    return {
      takenAt,
      releasedAt: () => releasedAt,
      release: () => {
        clearTimeout(timer);
        release();
      },
    };
  }

  it('answers a call alone in flight while its record waits for the lock; the record is there next', async () => {
    const open = holdModelAnswers();
    let held: ReturnType<typeof holdWriteLock> | undefined;
    const answered = api('POST', '/local/echo/v1/run', { text: 'hi' }).then((a) => {
      held?.release();
      return a;
    });
    await modelReached(1);
    // The admission is committed (the model was called); the record is the next write.
    held = holdWriteLock();
    open();
    const answer = await answered;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.ok(
      answer.at < held.releasedAt(),
      `the answer came ${Math.round(answer.at - held.takenAt)} ms after the lock was taken, after its release`,
    );
    // Any request after the answer sees the record, committed once the lock was released.
    assert.ok((await usageLogIds()).includes(answer.body.metadata.request_id as string));
  });

  it('answers calls in flight together only after their records commit', async () => {
    const open = holdModelAnswers();
    const calls = [1, 2].map(() => api('POST', '/local/echo/v1/run', { text: 'hi' }));
    await modelReached(2);
    const held = holdWriteLock();
    open();
    // Long enough for both answers to arrive if they did not wait (a few ms without the lock).
    await new Promise((r) => setTimeout(r, 500));
    held.release();
    const answers = await Promise.all(calls);
    const ids = await usageLogIds();
    for (const a of answers) {
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.ok(a.at >= held.releasedAt(), 'an answer arrived while its record waited for the lock');
      assert.ok(ids.includes(a.body.metadata.request_id as string));
    }
  });
});
