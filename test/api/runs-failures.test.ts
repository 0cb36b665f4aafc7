import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { callRunEntity } from '../../functions/core/runs/call-run-record.ts';
import { runEventEntity } from '../../functions/core/runs/run-event-record.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type ApiResponse, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { putStrandedRun } from '../helpers/stranded-run.ts';
import { waitFor } from '../helpers/wait-for.ts';

/*
 * Runs when things go wrong (docs/runs.md): a store write that fails or is slow, a process gone, a
 * reader resuming after the last event, a filtered list over many runs, a paid run that could not
 * be written. Found by attacking the feature; each case failed before its fix.
 */

type EventList = {
  events: { id: number; event: string; data: Record<string, unknown>; at: string }[];
  ended: boolean;
  next_after: number;
};
type RunDoc = {
  run_id: string;
  status: string;
  request_id: string;
  ended_at: string | null;
  deadline_at: string;
  cancel_requested_at: string | null;
  result: {
    status: number;
    body: Record<string, unknown> & { error?: { code: string; message: string } };
  } | null;
};
type Checkout = { checkout_url: string };

describe('runs when things go wrong', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let key: string;
  let accountId: string;
  let buyerKey: string;

  const call = (body: unknown, as = key, path = '/rrev/echo/v1/run') =>
    p.request<RunDoc>('POST', path, { key: as, body, headers: { prefer: 'respond-async' } });
  const getRun = (id: string, as = key) => p.request<RunDoc>('GET', `/runs/${id}`, { key: as });
  const ended = (id: string, as = key) =>
    waitFor(`run ${id} to end`, async () => {
      const run = (await getRun(id, as)).body;
      return run.ended_at ? run : undefined;
    });
  const balanceOf = async (k: string) =>
    (await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key: k })).body
      .balance_credits;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
    const owner = await createAccount(p.deps, { org: 'rrev', tier: 'pro' });
    key = owner.api_key;
    accountId = owner.account.id;
    for (const agent of [
      { name: 'echo', description: 'Echoes.' },
      { name: 'paid', description: 'Paid.', is_public: true, price_credits: 5 },
    ]) {
      const published = await p.request('POST', '/agents', {
        key,
        body: {
          ...agent,
          supported_providers: ['openai'],
          prompt_template: 'Say {{text}}',
          input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      });
      assert.equal(published.status, 201, published.text);
    }
    buyerKey = (await createAccount(p.deps, { org: 'rrevbuyer', tier: 'pro' })).api_key;
    const co = await p.request<Checkout>('POST', '/billing/checkout', {
      key: buyerKey,
      body: { credits: 500 },
    });
    await p.request('POST', `${new URL(co.body.checkout_url).pathname}/confirm`, { key: null });
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  /** A run record left `running` by a process that went away, with `deltas` logged deltas. */
  const interruptedRun = async (runId: string, deltas: number) => {
    const now = p.clock.now().getTime();
    await putStrandedRun(p.deps.store, {
      runId,
      accountId,
      agent: 'rrev/echo/v1',
      requestId: 'req_gone',
      startedMs: now - 600_000,
      deadlineMs: now - 300_000,
    });
    for (let seq = 1; seq <= deltas; seq++)
      await p.deps.store.put(
        runEventEntity.toItem({
          run_id: runId,
          seq,
          event: 'delta',
          data: { text: `piece ${seq} ` },
          at: new Date(now - 590_000).toISOString(),
          expires_ms: now + 86_400_000,
        }),
      );
  };

  it('answers an interrupted run’s last event once: a reader that resumes after it gets nothing more (JSON after, SSE Last-Event-ID)', async () => {
    const runId = '01900000-0000-7000-8000-0000000000f1';
    await interruptedRun(runId, 2);
    const all = await p.request<EventList>('GET', `/runs/${runId}/events`, { key });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(
      all.body.events.map((e) => [e.id, e.event]),
      [
        [1, 'delta'],
        [2, 'delta'],
        [3, 'error'],
      ],
    );
    assert.equal(all.body.ended, true);
    // Read on from next_after, as the docs say: nothing is left.
    const on = await p.request<EventList>('GET', `/runs/${runId}/events?after=${all.body.next_after}`, {
      key,
    });
    const sse = await readEventStream(
      await p.fetch(`/runs/${runId}/events`, {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'last-event-id': '3' },
      }),
      Date.now(),
    );
    assert.deepEqual(
      {
        json: on.body.events.map((e) => [e.id, e.event]),
        sse: sse.events.map((e) => [e.id, e.event]),
      },
      { json: [], sse: [] },
      'each event once: the run’s last event is not answered twice',
    );
  });

  it('answers nothing after a run’s last event, however far past it a reader asks', async () => {
    const runId = '01900000-0000-7000-8000-0000000000f2';
    await interruptedRun(runId, 1);
    const far = await p.request<EventList>('GET', `/runs/${runId}/events?after=1000`, { key });
    assert.deepEqual(far.body.events, [], 'the run has 2 events: nothing comes after 1000');
  });

  it('stops watching a run for a cancel once it ended, its record’s write slow as it may be', async () => {
    // The run record's write is slow (a DynamoDB write retried under throttling, a busy SQLite):
    // the model answers before it lands.
    const store = p.deps.store;
    const put = store.put.bind(store);
    const get = store.get.bind(store);
    store.put = async (item, options) => {
      if (String(item.pk).endsWith('#RUNS') && String(item.pk).startsWith('ACCOUNT#'))
        await new Promise((r) => setTimeout(r, 400));
      return put(item, options);
    };
    let runId = '';
    let polls = 0;
    store.get = async (k) => {
      if (runId && k.sk === `RUN#${runId}`) polls++;
      return get(k);
    };
    try {
      fake.enqueue({ text: 'quick' });
      const started = await call({ text: 'quick' });
      assert.equal(started.status, 202, started.text);
      runId = started.body.run_id;
      const done = await ended(runId);
      assert.equal(done.status, 'succeeded');
      // Nobody reads the run from here on.
      polls = 0;
      await new Promise((r) => setTimeout(r, 3_500));
      assert.equal(polls, 0, `the ended run's record was read ${polls} times in 3.5 s by nobody`);
    } finally {
      store.put = put;
      store.get = get;
    }
  });

  it('a run whose end fails to be written at first is ended by a retry, as its call ended (charged, succeeded)', async () => {
    const store = p.deps.store;
    const update = store.update.bind(store);
    let refusals = 2;
    store.update = async (k, ...rest) => {
      if (String(k.pk).startsWith('ACCOUNT#') && String(k.pk).endsWith('#RUNS') && refusals > 0) {
        refusals--;
        throw new Error('ProvisionedThroughputExceededException');
      }
      return update(k, ...rest);
    };
    try {
      fake.enqueue({ text: 'paid answer' });
      const started = await call({ text: 'x' }, buyerKey, '/rrev/paid/v1/run');
      assert.equal(started.status, 202, started.text);
      const done = await ended(started.body.run_id, buyerKey);
      assert.deepEqual(
        { status: done.status, result: done.result?.status },
        { status: 'succeeded', result: 200 },
      );
      assert.equal(refusals, 0, 'its end was refused twice before it was written');
    } finally {
      store.update = update;
    }
    assert.equal(await balanceOf(buyerKey), 495, 'the call was charged once');
  });

  it('an interrupted run does not promise a refund its call record may not owe', async () => {
    const runId = '01900000-0000-7000-8000-0000000000f3';
    await interruptedRun(runId, 0);
    const run = (await getRun(runId)).body;
    assert.equal(run.status, 'failed');
    assert.doesNotMatch(run.result?.body.error?.message ?? '', /refunded/);
    assert.match(run.result?.body.error?.message ?? '', /call record/);
  });

  it('runs nothing and charges nothing when the run’s record cannot be written: the caller gets the failure', async () => {
    const store = p.deps.store;
    const put = store.put.bind(store);
    store.put = async (item, options) => {
      if (String(item.pk).startsWith('ACCOUNT#') && String(item.pk).endsWith('#RUNS')) {
        // A slow failure: the SDK's retries give up after a while.
        await new Promise((r) => setTimeout(r, 600));
        throw new Error('ProvisionedThroughputExceededException');
      }
      return put(item, options);
    };
    const before = await balanceOf(buyerKey);
    try {
      fake.enqueue({ text: 'one two three', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 100 });
      const started = await call({ text: 'x' }, buyerKey, '/rrev/paid/v1/run');
      assert.equal(started.status >= 500, true, started.text);
      // Whatever the call did in the background settles.
      await new Promise((r) => setTimeout(r, 1_500));
    } finally {
      store.put = put;
    }
    assert.equal(
      await balanceOf(buyerKey),
      before,
      'a call answered 500, with no run to read its output from, is not billed',
    );
  });

  it('ends cancelled a run whose cancel was accepted though its process was gone; a second cancel answers the same', async () => {
    const runId = '01900000-0000-7000-8000-0000000000f5';
    const now = p.clock.now().getTime();
    await putStrandedRun(p.deps.store, {
      runId,
      accountId,
      agent: 'rrev/echo/v1',
      requestId: 'req_gone5',
      startedMs: now - 10_000,
      deadlineMs: now + 20_000,
    });
    const cancel = await p.request<RunDoc>('POST', `/runs/${runId}/cancel`, { key });
    assert.equal(cancel.status, 202, cancel.text);
    p.clock.advance(20_000 + 61_000);
    try {
      const later = (await getRun(runId)).body;
      const again = await p.request<RunDoc>('POST', `/runs/${runId}/cancel`, { key });
      assert.deepEqual(
        { status: later.status, again: again.status },
        { status: 'cancelled', again: 200 },
        'a run whose cancel was accepted ends cancelled (a second cancel answers as the first)',
      );
    } finally {
      p.clock.advance(-(20_000 + 61_000));
    }
  });

  it('keeps a caller’s run from the agent’s author: 404 on the run, its events and its cancel, and not in the author’s list', async () => {
    // The author of a public agent sees a stranger's call of it as its traces allow (in outline);
    // the run, its body and its events are the caller's alone (docs/runs.md).
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'the buyer’s answer' };
    });
    const started = await call({ text: 'private words' }, buyerKey, '/rrev/paid/v1/run');
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    for (const [method, path] of [
      ['GET', `/runs/${id}`],
      ['GET', `/runs/${id}/events`],
      ['POST', `/runs/${id}/cancel`],
    ] as const) {
      const tried = await p.request(method, path, { key });
      assert.equal(tried.status, 404, `${method} ${path} as the author: ${tried.text}`);
      assert.doesNotMatch(tried.text, /private words|rrevbuyer/);
    }
    const list = await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key });
    assert.ok(!list.body.runs.some((r) => r.run_id === id), 'the author lists the buyer’s run');
    assert.equal((await getRun(id, buyerKey)).body.status, 'running', 'the author’s cancel changed nothing');
    release();
    const done = await ended(id, buyerKey);
    assert.equal(done.status, 'succeeded');
  });

  it('lists, page after page, a run a filter matches behind 1,000 that it does not, in few store reads', async () => {
    const acct = await createAccount(p.deps, { org: 'rrevlist', tier: 'pro' });
    const now = p.clock.now().getTime();
    // 1,005 runs, oldest first: only the oldest was cancelled.
    for (let i = 0; i < 1005; i++) {
      const id = `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`;
      await p.deps.store.put(
        callRunEntity.toItem({
          run_id: id,
          account_id: acct.account.id,
          key_id: 'key',
          agent_id: 'agent',
          agent: 'rrev/echo/v1',
          workspace_id: 'ws',
          endpoint: 'run',
          status: i === 0 ? 'cancelled' : 'succeeded',
          request_id: `req_${i}`,
          trace_id: null,
          created_at: new Date(now - 1000).toISOString(),
          started_at: new Date(now - 1000).toISOString(),
          ended_at: new Date(now - 500).toISOString(),
          deadline_at: new Date(now + 1000).toISOString(),
          result_status: 200,
          result_body: { data: {}, warnings: [], metadata: {} },
          cancel_requested_at: null,
          webhook_url: null,
        }),
      );
    }
    let queries = 0;
    const store = p.deps.store;
    const query = store.query.bind(store);
    store.query = (q) => {
      queries++;
      return query(q);
    };
    const found: string[] = [];
    let pages = 0;
    let cursor: string | null = null;
    try {
      do {
        const page: ApiResponse<{ runs: RunDoc[]; next_cursor: string | null }> = await p.request(
          'GET',
          `/runs?status=cancelled&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          { key: acct.api_key },
        );
        assert.equal(page.status, 200, page.text);
        found.push(...page.body.runs.map((r) => r.run_id));
        cursor = page.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
    } finally {
      store.query = query;
    }
    assert.ok(queries <= 20, `${queries} store reads`);
    assert.deepEqual(
      found,
      ['01900000-0000-7000-8000-000000000000'],
      'the cancelled run is listed, on some page',
    );
  });
});
