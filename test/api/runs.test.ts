import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { documentProblems } from '../helpers/openapi-conformance.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runningCommands } from '../helpers/running-commands.ts';
import { putStrandedRun } from '../helpers/stranded-run.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Runs: a call sent with `Prefer: respond-async` answers 202 once it is admitted, and its run is
 * read back from GET /runs/{run_id} and GET /runs by its caller alone (docs/runs.md). In memory:
 * the app's own answers, no socket needed.
 */

type EventList = {
  events: { id: number; event: string; data: Record<string, unknown>; at: string }[];
  ended: boolean;
  next_after: number;
  metadata?: unknown;
};

/** A call's answer body: the success or the error envelope. */
type Envelope = {
  data?: unknown;
  warnings?: unknown[];
  metadata: Record<string, unknown>;
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

type RunDoc = {
  run_id: string;
  status: string;
  agent: string;
  request_id: string;
  trace_id: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  cancel_requested_at: string | null;
  result: { status: number; body: Envelope } | null;
};

describe('runs (Prefer: respond-async)', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let key: string;
  let accountId: string;
  let otherKey: string;

  const call = (body: unknown, headers: Record<string, string> = {}, as = key) =>
    p.request<RunDoc & { metadata: Record<string, unknown> }>('POST', '/runco/echo/v1/run', {
      key: as,
      body,
      headers: { prefer: 'respond-async', ...headers },
    });
  const getRun = (id: string, as = key) => p.request<RunDoc>('GET', `/runs/${id}`, { key: as });
  const ended = (id: string) =>
    waitFor(`run ${id} to end`, async () => {
      const run = (await getRun(id)).body;
      return run.ended_at ? run : undefined;
    });
  /** A model answer held until `release` is called. */
  const held = () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'held answer' };
    });
    return release;
  };

  /** The caller's concurrency slots held now. */
  const leasesHeld = async () =>
    (await p.deps.store.query({ pk: `ACCOUNT#${accountId}`, sk: { beginsWith: 'LEASE#' } })).items.length;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
    const owner = await createAccount(p.deps, { org: 'runco', tier: 'pro' });
    key = owner.api_key;
    accountId = owner.account.id;
    otherKey = (await createAccount(p.deps, { org: 'otherco', tier: 'pro' })).api_key;
    const published = await p.request('POST', '/agents', {
      key,
      body: {
        name: 'echo',
        description: 'Echoes.',
        supported_providers: ['openai'],
        prompt_template: 'Say {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('answers 202 with the run, a Location and Preference-Applied while it runs, and ends it with exactly the plain call’s body', async () => {
    const release = held();
    const started = await call({ text: 'hi' });
    assert.equal(started.status, 202, started.text);
    const run = started.body;
    assert.equal(run.status, 'running');
    assert.equal(run.result, null);
    assert.equal(run.agent, 'runco/echo/v1');
    assert.equal(started.headers.get('location'), `/runs/${run.run_id}`);
    assert.equal(started.headers.get('preference-applied'), 'respond-async');
    assert.equal(started.headers.get('x-trace-id'), run.trace_id);
    assert.equal(run.request_id, started.body.metadata.request_id);
    // Still running: the 202 did not wait for the model.
    assert.equal((await getRun(run.run_id)).body.status, 'running');
    release();
    const done = await ended(run.run_id);
    // As /openapi.json documents them: the 202, a run that ended, and a page of runs.
    const page = await p.request('GET', '/runs?limit=5', { key });
    assert.deepEqual(
      [
        ...documentProblems('/{org}/{agent}/{version}/{endpoint}', 'POST', 202, started.body),
        ...documentProblems('/runs/{run_id}', 'GET', 200, (await getRun(run.run_id)).body),
        ...documentProblems('/runs', 'GET', 200, page.body),
      ],
      [],
    );
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result?.status, 200);
    assert.ok(done.duration_ms !== null && done.duration_ms >= 0);

    const plain = await p.request<Envelope>('POST', '/runco/echo/v1/run', {
      key,
      body: { text: 'hi' },
    });
    assert.equal(plain.status, 200, plain.text);
    assert.ok(done.result);
    const body = done.result.body;
    assert.deepEqual(Object.keys(body).sort(), Object.keys(plain.body).sort());
    assert.deepEqual(body.data, plain.body.data);
    assert.deepEqual(body.warnings, plain.body.warnings);
    assert.deepEqual(Object.keys(body.metadata).sort(), Object.keys(plain.body.metadata).sort());
    assert.equal(body.metadata.request_id, run.request_id);
    assert.equal(body.metadata.trace_id, run.trace_id);
  });

  it('refuses before it runs with the ordinary answer, and starts no run', async () => {
    const before = (await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key })).body.runs.length;
    const refused = await call({ nope: 1 });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(errorOf(refused).code, 'INVALID_INPUT');
    assert.equal(refused.headers.get('preference-applied'), null);
    const after = (await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key })).body.runs.length;
    assert.equal(after, before);
    assert.equal(fake.calls.length, 0);
  });

  it('ends a run whose call fails with the plain call’s error envelope and status', async () => {
    fake.enqueue({ status: 500, errorMessage: 'the model is down' });
    const started = await call({ text: 'fail' });
    assert.equal(started.status, 202, started.text);
    const done = await ended(started.body.run_id);
    assert.equal(done.status, 'failed');
    assert.equal(done.result?.status, 502);
    assert.equal(done.result?.body.error?.code, 'LLM_ERROR');
    assert.equal(done.result?.body.metadata.request_id, done.request_id);
  });

  it('counts the run’s call once against the daily quota, with one call record', async () => {
    const quota = async () =>
      (await p.request<{ quota: { used: number } }>('GET', '/usage', { key })).body.quota.used;
    const used = await quota();
    const started = await call({ text: 'count' });
    assert.equal(started.status, 202, started.text);
    const done = await ended(started.body.run_id);
    assert.equal(await quota(), used + 1);
    const logs = await p.request<{ logs: { request_id: string }[] }>('GET', '/usage/logs', { key });
    assert.equal(logs.body.logs.filter((l) => l.request_id === done.request_id).length, 1);
  });

  it('is read by its caller alone: another account gets 404 and does not see it in its list', async () => {
    const started = await call({ text: 'mine' });
    const id = started.body.run_id;
    await ended(id);
    const stranger = await getRun(id, otherKey);
    assert.equal(stranger.status, 404, stranger.text);
    assert.equal(errorOf(stranger).code, 'NOT_FOUND');
    assert.doesNotMatch(stranger.text, /runco|mine/);
    const list = await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key: otherKey });
    assert.equal(list.status, 200, list.text);
    assert.ok(!list.body.runs.some((r) => r.run_id === id));
    const anonymous = await p.request('GET', `/runs/${id}`, { key: null });
    assert.equal(anonymous.status, 401);
  });

  it('lists the caller’s runs newest first, page by page, narrowed by status and agent', async () => {
    const ids: string[] = [];
    for (const text of ['a', 'b', 'c']) {
      const started = await call({ text });
      ids.push(started.body.run_id);
      await ended(started.body.run_id);
    }
    const first = await p.request<{ runs: RunDoc[]; next_cursor: string | null }>('GET', '/runs?limit=2', {
      key,
    });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.runs.map((r) => r.run_id),
      [ids[2], ids[1]],
    );
    assert.equal(first.body.next_cursor, ids[1]);
    const second = await p.request<{ runs: RunDoc[] }>(
      'GET',
      `/runs?limit=2&cursor=${first.body.next_cursor}`,
      {
        key,
      },
    );
    assert.equal(second.body.runs[0]?.run_id, ids[0]);
    const failed = await p.request<{ runs: RunDoc[] }>('GET', '/runs?status=failed', { key });
    assert.ok(failed.body.runs.length >= 1);
    assert.ok(failed.body.runs.every((r) => r.status === 'failed'));
    const none = await p.request<{ runs: RunDoc[] }>('GET', '/runs?agent=runco/other', { key });
    assert.deepEqual(none.body.runs, []);
    const echo = await p.request<{ runs: RunDoc[] }>('GET', '/runs?agent=runco/echo/v1&limit=100', { key });
    assert.ok(echo.body.runs.length >= 3);
    const bad = await p.request('GET', '/runs?cursor=nope&status=sleeping', { key });
    assert.equal(bad.status, 400);
    assert.deepEqual(errorOf(bad).fields.sort(), ['query.cursor', 'query.status']);
  });

  it('answers a run left running well past its deadline (its process gone) as failed, interrupted', async () => {
    const now = p.clock.now().getTime();
    const runId = '01900000-0000-7000-8000-000000000001';
    await putStrandedRun(p.deps.store, {
      runId,
      accountId,
      agent: 'runco/echo/v1',
      requestId: 'req_gone',
      startedMs: now - 600_000,
      deadlineMs: now - 300_000,
    });
    const run = (await getRun(runId)).body;
    assert.equal(run.status, 'failed');
    assert.equal(run.result?.status, 503);
    assert.match(run.result?.body.error?.message ?? '', /interrupted/);
  });

  it('logs the events a streamed call would send, read as JSON from the start or after an id', async () => {
    fake.enqueue({ text: 'one two three', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 300 });
    const started = await call({ text: 'story' });
    assert.equal(started.status, 202, started.text);
    const done = await ended(started.body.run_id);
    const all = await p.request<EventList>('GET', `/runs/${done.run_id}/events`, { key });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(documentProblems('/runs/{run_id}/events', 'GET', 200, all.body), []);
    const { events } = all.body;
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    );
    assert.equal(events.at(-1)?.event, 'result');
    assert.deepEqual(events.at(-1)?.data, done.result?.body);
    const deltas = events.filter((e) => e.event === 'delta');
    assert.ok(deltas.length >= 2, 'text apart in time is logged apart');
    assert.equal(deltas.map((e) => e.data.text).join(''), 'one two three');
    assert.equal(all.body.ended, true);
    assert.equal(all.body.next_after, events.length);
    const rest = await p.request<EventList>('GET', `/runs/${done.run_id}/events?after=1`, { key });
    assert.deepEqual(rest.body.events, events.slice(1));
    const none = await p.request<EventList>('GET', `/runs/${done.run_id}/events?after=${events.length}`, {
      key,
    });
    assert.deepEqual(none.body, {
      events: [],
      ended: true,
      next_after: events.length,
      metadata: none.body.metadata,
    });
    const stranger = await p.request('GET', `/runs/${done.run_id}/events`, { key: otherKey });
    assert.equal(stranger.status, 404, stranger.text);
  });

  it('follows the events as SSE while the run goes on; a client that lost them resumes with Last-Event-ID, and gets each once', async () => {
    fake.enqueue({ text: 'alpha beta gamma', chunks: ['alpha ', 'beta ', 'gamma'], chunkDelayMs: 400 });
    const started = await call({ text: 'follow' });
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    const follow = (headers: Record<string, string> = {}) =>
      p.fetch(`/runs/${id}/events`, {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers },
      });
    // The first delta, then the client goes away.
    const first = await follow();
    assert.equal(first.status, 200);
    assert.match(first.headers.get('content-type') ?? '', /^text\/event-stream/);
    const head = await readEventStream(first, Date.now(), (e) => e.event === 'delta');
    const seen = head.events.at(-1);
    assert.equal(seen?.event, 'delta');
    // Back, after the event it saw: the rest, to the run's last event, and the stream ends.
    const tail = await readEventStream(await follow({ 'last-event-id': seen?.id ?? '' }), Date.now());
    const ids = [...head.events, ...tail.events].map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      ids.map((_, i) => i + 1),
      'every event once, in order',
    );
    assert.equal(tail.events.at(-1)?.event, 'result');
    const text = [...head.events, ...tail.events]
      .filter((e) => e.event === 'delta')
      .map((e) => (JSON.parse(e.data) as { text: string }).text)
      .join('');
    assert.equal(text, 'alpha beta gamma');
    const bad = await follow({ 'last-event-id': 'yesterday' });
    assert.equal(bad.status, 400);
  });

  it('cancels a running run: its model request is cut, its slot released, and it ends cancelled with its call record; a second cancel answers the same', async () => {
    held();
    const started = await call({ text: 'cancel me' });
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    await waitFor('the model request', () => fake.calls[0]);
    assert.equal(await leasesHeld(), 1);
    const stranger = await p.request('POST', `/runs/${id}/cancel`, { key: otherKey });
    assert.equal(stranger.status, 404, stranger.text);
    assert.equal((await getRun(id)).body.status, 'running', 'another account’s cancel changed nothing');

    const cancelled = await p.request<RunDoc>('POST', `/runs/${id}/cancel`, { key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.ok(cancelled.body.cancel_requested_at);
    assert.equal(cancelled.body.result?.status, 504);
    assert.deepEqual(cancelled.body.result?.body.error?.details, { reason: 'cancelled' });
    assert.deepEqual(documentProblems('/runs/{run_id}/cancel', 'POST', 200, cancelled.body), []);
    assert.equal(await fake.calls[0]?.settled, 'disconnected', 'the model request was cut');
    assert.equal(await leasesHeld(), 0, 'its concurrency slot is free');
    const logs = await p.request<{ logs: { request_id: string; status: string }[] }>('GET', '/usage/logs', {
      key,
    });
    assert.equal(logs.body.logs.find((l) => l.request_id === cancelled.body.request_id)?.status, 'timeout');
    const again = await p.request<RunDoc>('POST', `/runs/${id}/cancel`, { key });
    assert.equal(again.status, 200);
    assert.deepEqual({ ...again.body, metadata: null }, { ...cancelled.body, metadata: null });
    const events = await p.request<EventList>('GET', `/runs/${id}/events`, { key });
    assert.equal(events.body.events.at(-1)?.event, 'error');
  });

  it('cancels a run in the middle of its sandboxed command: the command is killed, nothing is left running', async () => {
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key,
      body: {
        name: 'sleeper',
        type: 'tool',
        description: 'Sleeps.',
        supported_providers: ['any'],
        required_secrets: [],
        runtime: { command: 'sleep 37' },
      },
    });
    assert.equal(published.status, 201, published.text);
    const started = await p.request<RunDoc>('POST', '/runco/sleeper/v1/run', {
      key,
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    await waitFor('the command to run', async () =>
      (await runningCommands('sleep 37')) > 0 ? true : undefined,
    );
    const cancelled = await p.request<RunDoc>('POST', `/runs/${started.body.run_id}/cancel`, { key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'cancelled');
    await waitFor(
      'the command to be gone',
      async () => ((await runningCommands('sleep 37')) === 0 ? true : undefined),
      5_000,
    );
    assert.equal(await leasesHeld(), 0);
  });

  it('refuses to cancel a run that ended otherwise: 409, the run unchanged', async () => {
    const started = await call({ text: 'done' });
    const done = await ended(started.body.run_id);
    const refused = await p.request('POST', `/runs/${done.run_id}/cancel`, { key });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(errorOf(refused).code, 'CONFLICT');
    assert.equal((await getRun(done.run_id)).body.status, 'succeeded');
  });

  it('ignores other preferences, and answers a plain call when respond-async is not among them', async () => {
    const plain = await call({ text: 'x' }, { prefer: 'return=minimal, wait=5' });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.headers.get('preference-applied'), null);
    // Named among others, in any case; and over an Accept that prefers a stream of events.
    const both = await call(
      { text: 'y' },
      { prefer: 'wait=10; foo="a,b", RESPOND-ASYNC', accept: 'text/event-stream' },
    );
    assert.equal(both.status, 202, both.text);
    assert.match(both.headers.get('content-type') ?? '', /^application\/json/);
    await ended(both.body.run_id);
  });
});
