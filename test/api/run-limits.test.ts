import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { connectMcp, startTask } from '../helpers/mcp-client.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * How long a run may last (docs/runs.md, "How long a run lasts"): the agent's run_timeout_seconds,
 * within the caller's tier (an hour for Pro, 300 s for Free) and PLATFORM_MAX_RUN_SECONDS, or the
 * caller's X-Platform-Deadline-Ms if earlier; a waiting call keeps the request timeout's 300 s, and
 * a run with files (not carried on) the streamed call's cap. The streamed cap is set to 240 s here
 * so that each cap is told apart. In memory: the app's own answers, no socket needed.
 */

type RunDoc = { run_id: string; status: string; deadline_at: string; ended_at: string | null };

const STREAMED_CAP_SECONDS = 240;

describe('how long a run may last', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let pro: { key: string; accountId: string };
  let free: { key: string; accountId: string };
  const clients: Client[] = [];

  /** Seconds from the platform's now to the run's deadline_at. */
  const secondsLeft = (run: RunDoc) => (Date.parse(run.deadline_at) - p.clock.now().getTime()) / 1000;
  /** About `seconds`: the deadline is counted from when the call began, a moment before. */
  const assertAbout = (actual: number, seconds: number, what: string) =>
    assert.ok(actual <= seconds && actual > seconds - 5, `${what}: ${actual} s, expected about ${seconds} s`);
  const start = (org: string, key: string, headers: Record<string, string> = {}) =>
    p.request<RunDoc>('POST', `/${org}/long/v1/run`, {
      key,
      body: { text: 'hi' },
      headers: { prefer: 'respond-async', ...headers },
    });
  const ended = (id: string, key: string) =>
    waitFor(`run ${id} to end`, async () => {
      const run = (await p.request<RunDoc>('GET', `/runs/${id}`, { key })).body;
      return run.ended_at ? run : undefined;
    });
  const publish = async (key: string) => {
    const res = await p.request('POST', '/agents', {
      key,
      body: {
        name: 'long',
        description: 'Runs long.',
        supported_providers: ['openai'],
        prompt_template: 'Say {{text}}',
        run_timeout_seconds: 3600,
      },
    });
    assert.equal(res.status, 201, res.text);
  };

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: fake.baseUrls.openai,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
        PLATFORM_MAX_STREAMED_CALL_SECONDS: String(STREAMED_CAP_SECONDS),
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    pro = await p.createAccount('rlpro', 'pro');
    free = await p.createAccount('rlfree', 'free');
    await publish(pro.key);
    await publish(free.key);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('a Pro account’s run of an agent with run_timeout_seconds 3600 gets an hour', async () => {
    const started = await start('rlpro', pro.key);
    assert.equal(started.status, 202, started.text);
    assertAbout(secondsLeft(started.body), 3600, 'the 202’s deadline_at');
    const done = await ended(started.body.run_id, pro.key);
    assert.equal(done.status, 'succeeded');
    assertAbout(secondsLeft(done), 3600, 'the run’s deadline_at');
  });

  it('a Free account’s run of the same agent is held to its tier’s 300 s', async () => {
    const started = await start('rlfree', free.key);
    assert.equal(started.status, 202, started.text);
    assertAbout(secondsLeft(started.body), 300, 'deadline_at');
    await ended(started.body.run_id, free.key);
  });

  it('the caller’s X-Platform-Deadline-Ms still shortens a run', async () => {
    const deadline = p.clock.now().getTime() + 600_000;
    const started = await start('rlpro', pro.key, { 'x-platform-deadline-ms': String(deadline) });
    assert.equal(started.status, 202, started.text);
    assertAbout(secondsLeft(started.body), 600, 'deadline_at');
    await ended(started.body.run_id, pro.key);
  });

  it('a waiting call of the agent keeps the request timeout: 300 s', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'done' };
    });
    const answer = p.request('POST', '/rlpro/long/v1/run', { key: pro.key, body: { text: 'hi' } });
    // Its concurrency slot's lease runs to its deadline and 30 s more (quotas.ts).
    const lease = await waitFor('the call’s lease', async () => {
      const { items } = await p.deps.store.query({
        pk: `ACCOUNT#${pro.accountId}`,
        sk: { beginsWith: 'LEASE#' },
      });
      return items.find((item) => item.lease_id !== undefined);
    });
    release();
    assert.equal((await answer).status, 200);
    assertAbout(Number(lease.ttl) - 30 - p.clock.now().getTime() / 1000, 300, 'the lease’s deadline');
  });

  it('a run with files, which is not carried on, keeps the streamed call’s cap', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello file'], { type: 'text/plain' }), 'note.txt');
    form.append('metadata', JSON.stringify({ text: 'hi' }));
    const res = await p.fetch(`${p.url}/rlpro/long/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pro.key}`, prefer: 'respond-async' },
      body: form,
    });
    const run = (await res.json()) as RunDoc;
    assert.equal(res.status, 202, JSON.stringify(run));
    assertAbout(secondsLeft(run), STREAMED_CAP_SECONDS, 'deadline_at');
    await ended(run.run_id, pro.key);
  });

  it('publishing refuses a run_timeout_seconds past an hour, on its field', async () => {
    const res = await p.request('POST', '/agents', {
      key: pro.key,
      body: {
        name: 'longer',
        description: 'Runs longer.',
        supported_providers: ['openai'],
        prompt_template: 'Say {{text}}',
        run_timeout_seconds: 3601,
      },
    });
    assert.equal(res.status, 400, res.text);
    const error = errorOf(res);
    assert.deepEqual(error.fields, ['body.run_timeout_seconds']);
    assert.match(res.text, /at most 3600/);
  });

  it('an MCP task is a run: an hour for a Pro account', async () => {
    const client = await connectMcp(p.url, pro.key, '', p.fetch);
    clients.push(client);
    const task = await startTask(client, 'rlpro__long', { text: 'hi' });
    const run = await ended(task.taskId, pro.key);
    assert.equal(run.status, 'succeeded');
    assertAbout(secondsLeft(run), 3600, 'deadline_at');
  });
  it('a run’s managed loop lives as long as the run, each of its commands within the tier’s sandbox time; a call’s loop within it whole', async () => {
    const res = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: pro.key,
      body: {
        name: 'looper',
        type: 'agent',
        description: 'Loops long.',
        supported_providers: ['anthropic'],
        prompt_template: 'Loop.',
        loop: { max_turns: 3 },
        run_timeout_seconds: 3600,
      },
    });
    assert.equal(res.status, 201, res.text);
    // What the loop asks of the sandbox: its session's deadline and each command's time.
    const seen: { sessionSeconds: number[]; commandSeconds: number[] } = {
      sessionSeconds: [],
      commandSeconds: [],
    };
    const sandbox = p.deps.sandbox;
    const openSession = sandbox.openSession.bind(sandbox);
    sandbox.openSession = async (spec) => {
      seen.sessionSeconds.push((spec.deadlineMs - Date.now()) / 1000);
      const session = await openSession(spec);
      const exec = session.exec.bind(session);
      session.exec = (command, options) => {
        seen.commandSeconds.push((options?.timeoutMs ?? 0) / 1000);
        return exec(command, options);
      };
      return session;
    };
    try {
      fake.setResponder((call) =>
        call.toolResults?.length
          ? { toolCalls: [{ name: 'submit_result', input: { ok: true } }] }
          : { toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] },
      );
      const started = await p.request<RunDoc>('POST', '/rlpro/looper/v1/run', {
        key: pro.key,
        body: {},
        headers: { prefer: 'respond-async' },
      });
      assert.equal(started.status, 202, started.text);
      assert.equal((await ended(started.body.run_id, pro.key)).status, 'succeeded');
      assertAbout(seen.sessionSeconds[0] ?? 0, 3600, 'the run’s session');
      assert.ok(
        seen.commandSeconds.length > 0 && seen.commandSeconds.every((s) => s <= 300),
        String(seen.commandSeconds),
      );
      fake.reset();
      fake.setResponder((call) =>
        call.toolResults?.length
          ? { toolCalls: [{ name: 'submit_result', input: { ok: true } }] }
          : { toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] },
      );
      const called = await p.request('POST', '/rlpro/looper/v1/run', { key: pro.key, body: {} });
      assert.equal(called.status, 200, called.text);
      assertAbout(seen.sessionSeconds[1] ?? 0, 300, 'the call’s session');
    } finally {
      sandbox.openSession = openSession;
    }
  });
});
