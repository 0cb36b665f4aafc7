import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { carryOnRun } from '../../functions/edge/run-resume.ts';
import type { RecordedRun } from '../../functions/ports/run-steps.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A run handed to the run worker (ports/run-worker.ts; on AWS the run-worker durable function,
 * docs/runs.md, "Where a run runs"): the request that admitted it answers 202 and leaves it
 * admitted, charged and running, with no record written, no slot freed and nothing refunded; the
 * worker's carrying on (edge/run-resume.ts carryOnRun, over steps that stand for the durable
 * engine's) runs it to its end once, billed once, its slot freed. A run that cannot be handed over
 * (a call with files) and a hand-over that fails run where they started. In memory, with the
 * RunWorker port taken by the test: the AWS one is held to the emulated Lambda service in
 * test/e2e/sandboxed-runs.test.ts.
 */

type RunDoc = {
  run_id: string;
  status: string;
  request_id: string;
  deadline_at: string;
  result: { status: number; body: { data?: unknown } } | null;
};

/** A step as a durable engine records it: its name, and its outcome or its failure. */
type Op = { name: string; outcome?: unknown; failed?: string };

/**
 * A durable engine's steps as AWS's SDK keeps them: numbered by the order they are asked for, a
 * replay answering each from the record at its place and ending the execution when another step
 * is asked for there; a failure recorded too. `hangAt`: the invocation stops when that step is
 * asked for, as one frozen there by its timeout: nothing more of it runs or is written.
 */
function durableEngine(ops: Op[] = [], hangAt?: number) {
  let next = 0;
  const engine = {
    ops,
    hung: false,
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      const n = next++;
      const prior = ops[n];
      if (prior) {
        if (prior.name !== name)
          throw new Error(`NonDeterministicExecutionError: step ${n} was ${prior.name}, not ${name}`);
        if (prior.failed !== undefined) throw new Error(prior.failed);
        return prior.outcome as T;
      }
      if (n === hangAt) {
        engine.hung = true;
        return new Promise<T>(() => {});
      }
      try {
        const outcome = JSON.parse(JSON.stringify((await fn()) ?? null)) as T;
        ops[n] = { name, outcome };
        return outcome;
      } catch (err) {
        ops[n] = { name, failed: String(err) };
        throw err;
      }
    },
  };
  return engine;
}

describe('runs handed over to the run worker', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let sellerKey: string;
  let buyerKey: string;
  let buyerId: string;
  const handed: RecordedRun[] = [];
  let refuse = false;

  const start = (body: unknown) =>
    p.request<RunDoc>('POST', '/handco/paid/v1/run', {
      key: buyerKey,
      body,
      headers: { prefer: 'respond-async' },
    });
  const getRun = (id: string) => p.request<RunDoc>('GET', `/runs/${id}`, { key: buyerKey });
  const balance = async () =>
    (await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key: buyerKey })).body
      .balance_credits;
  const leasesHeld = async () =>
    (await p.deps.store.query({ pk: `ACCOUNT#${buyerId}`, sk: { beginsWith: 'LEASE#' } })).items.length;
  const records = async (requestId: string) =>
    (
      (
        await p.request<{ logs: { request_id: string; status: string; credits: number }[] }>(
          'GET',
          '/usage/logs?limit=50',
          { key: buyerKey },
        )
      ).body.logs ?? []
    ).filter((l) => l.request_id === requestId);

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: fake.baseUrls.openai,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    // The AWS deployment's hand-over, taken by the test: it records what it was given.
    p.deps.runWorker = {
      async start(run) {
        if (refuse) throw new Error('TooManyRequestsException: Rate exceeded');
        handed.push(run);
      },
    };
    sellerKey = (await createAccount(p.deps, { org: 'handco', tier: 'pro' })).api_key;
    const published = await p.request('POST', '/agents', {
      key: sellerKey,
      body: {
        name: 'paid',
        description: 'Paid.',
        is_public: true,
        price_credits: 5,
        supported_providers: ['openai'],
        prompt_template: 'Say {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    });
    assert.equal(published.status, 201, published.text);
    const buyer = await createAccount(p.deps, { org: 'handbuyer', tier: 'pro' });
    buyerKey = buyer.api_key;
    buyerId = buyer.account.id;
    const co = await p.request<{ checkout_url: string }>('POST', '/billing/checkout', {
      key: buyerKey,
      body: { credits: 500 },
    });
    await p.request('POST', `${new URL(co.body.checkout_url).pathname}/confirm`, { key: null });
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
    handed.length = 0;
    refuse = false;
  });

  it('answers 202 admitted and charged, leaves the run to the worker, which runs it once to its end', async () => {
    const before = await balance();
    const started = await start({ text: 'tides' });
    assert.equal(started.status, 202, started.text);
    const run = started.body;
    assert.equal(run.status, 'running');
    assert.deepEqual(
      handed.map((h) => h.run_id),
      [run.run_id],
    );
    // Handed over: nothing ran here, nothing was recorded or given back.
    assert.equal(fake.calls.length, 0, 'no model request from the request that started it');
    assert.deepEqual(await records(run.request_id), []);
    assert.equal(await balance(), before - 5, 'charged once admitted');
    assert.equal(await leasesHeld(), 1, 'its concurrency slot still held');
    assert.equal((await getRun(run.run_id)).body.status, 'running');
    const recorded = await queryAll(p.deps.store, { pk: `RUN#${run.run_id}#STEPS` });
    assert.deepEqual(recorded.map((s) => String(s.sk).replace(/^STEP#/, '')).sort(), [
      'admission',
      'charge',
      'input',
    ]);

    // The worker carries it on: the steps its request recorded are read back, its own are the
    // engine's.
    const engine = durableEngine();
    const [open] = handed;
    assert.ok(open);
    assert.deepEqual(await carryOnRun(p.deps, open, engine), { ended: true });
    assert.deepEqual(
      engine.ops.map((o) => o.name),
      ['engine'],
    );
    assert.equal(fake.calls.length, 1, 'one model request');
    const done = (await getRun(run.run_id)).body;
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.result?.status, 200);
    assert.equal(done.deadline_at, run.deadline_at, 'its deadline is the one it was admitted with');
    assert.deepEqual(
      (await records(run.request_id)).map((r) => [r.status, r.credits]),
      [['success', 5]],
    );
    assert.equal(await balance(), before - 5, 'billed once');
    assert.equal(await leasesHeld(), 0, 'its slot freed with its record');
    // Nothing left to carry on: its open entry and its steps are gone.
    assert.deepEqual(await queryAll(p.deps.store, { pk: `RUN#${run.run_id}#STEPS` }), []);
    assert.deepEqual(await p.deps.runRecorder?.unended(), []);
    // A second start of the worker (a retried invoke) finds it ended and does nothing more.
    assert.deepEqual(await carryOnRun(p.deps, open, durableEngine()), { left: 'ended' });
    assert.equal(fake.calls.length, 1);
  });

  it('runs a call with files where it started: its input is not recorded, so it cannot be handed over', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello file'], { type: 'text/plain' }), 'note.txt');
    form.append('metadata', JSON.stringify({ text: 'tides' }));
    const res = await p.fetch(`${p.url}/handco/paid/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${buyerKey}`, prefer: 'respond-async' },
      body: form,
    });
    const run = (await res.json()) as RunDoc;
    assert.equal(res.status, 202, JSON.stringify(run));
    assert.deepEqual(handed, []);
    const done = await waitFor('the run to end', async () => {
      const read = (await getRun(run.run_id)).body;
      return read.status === 'running' ? undefined : read;
    });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(fake.calls.length, 1);
  });

  it('ends a run whose hand-over failed as failed, 500, refunded and its slot freed, with nothing run', async () => {
    refuse = true;
    const before = await balance();
    const started = await start({ text: 'tides' });
    assert.equal(started.status, 202, started.text);
    const done = await waitFor('the run to end', async () => {
      const read = (await getRun(started.body.run_id)).body;
      return read.status === 'running' ? undefined : read;
    });
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.result?.status, 500);
    assert.equal(fake.calls.length, 0, 'nothing ran');
    assert.equal(await balance(), before, 'refunded');
    assert.equal(await leasesHeld(), 0);
    assert.deepEqual(
      (await records(started.body.request_id)).map((r) => [r.status, r.credits]),
      [['error', 0]],
    );
    assert.ok(
      p.logs.some((l) => l.includes('run not handed over')),
      'the failed hand-over is logged',
    );
  });

  it('carries an orchestrator on past an invocation that stopped mid-run: its credential is issued anew each time without upsetting the engine’s order, and nothing finished is done again', async () => {
    for (const body of [
      {
        name: 'leafy',
        description: 'A leaf.',
        supported_providers: ['openai'],
        prompt_template: 'Leaf {{q}}',
      },
      {
        name: 'boss',
        type: 'agent',
        description: 'Calls the leaf.',
        supported_providers: ['anthropic'],
        prompt_template: 'Ask the leaf.',
        custom_tools: [
          { name: 'call_leaf', description: 'calls handco/leafy', command: 'call handco/leafy' },
        ],
        manifest: {
          manifest_version: 1,
          dependencies: [{ id: 'handco/leafy', version: 'v1' }],
          max_hops: 1,
          timeout_ms: 60_000,
          orchestration_mode: 'flexible',
        },
      },
    ]) {
      const res = await p.request('POST', '/agents?allow_no_secrets=true', { key: sellerKey, body });
      assert.equal(res.status, 201, res.text);
    }
    fake.setResponder((call) => {
      if (call.provider === 'openai') return { text: 'the leaf says hi' };
      const results = call.toolResults ?? [];
      if (results.length === 0) return { toolCalls: [{ name: 'call_leaf', input: { q: 'hi' } }] };
      return { toolCalls: [{ name: 'submit_result', input: { heard: String(results.at(-1)?.content) } }] };
    });
    const started = await p.request<RunDoc>('POST', '/handco/boss/v1/run', {
      key: sellerKey,
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    const [open] = handed;
    assert.ok(open);
    // The first invocation: the boss's first turn, its sub-call, then it stops before its second
    // turn (as a function that timed out there) and the run goes on running.
    const first = durableEngine([], 2);
    void carryOnRun(p.deps, open, first);
    await waitFor('the first invocation to stop', async () => (first.hung ? true : undefined));
    // Its sandbox session went with it (another Lambda's, on AWS): here its directory is removed.
    await rm(join(p.deps.config.dataDir, 'runs', started.body.request_id), { recursive: true, force: true });
    assert.equal(
      (await p.request<RunDoc>('GET', `/runs/${started.body.run_id}`, { key: sellerKey })).body.status,
      'running',
    );
    assert.deepEqual(
      first.ops.map((o) => o.name.replace(/^tool-.*/, 'tool')),
      ['model-0', 'tool'],
    );
    assert.equal(fake.calls.length, 2, 'the first turn and the sub-call');
    // The next invocation replays what the first checkpointed and goes on.
    const second = durableEngine([...first.ops]);
    assert.deepEqual(await carryOnRun(p.deps, open, second), { ended: true });
    const done = (await p.request<RunDoc>('GET', `/runs/${started.body.run_id}`, { key: sellerKey })).body;
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.match(JSON.stringify(done.result?.body.data), /the leaf says hi/);
    assert.equal(fake.calls.length, 3, 'neither the first turn nor the sub-call was made again');
    assert.equal(fake.calls.filter((c) => c.provider === 'openai').length, 1);
  });
});
