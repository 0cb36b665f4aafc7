import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { type AgentHostClient, AgentHostError, createClient } from '../../sdk/src/index.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { teller } from '../helpers/manifests.ts';
import { conformance } from '../helpers/openapi-conformance.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The SDK's runs (docs/runs.md): agents.start, runs.get, runs.wait, runs.follow (resumed after a
 * drop), runs.cancel, each answer checked against /openapi.json. The app in memory: its fetch.
 */

describe('the SDK’s runs', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let client: AgentHostClient;
  let apiKey: string;
  const problems: string[] = [];

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
    apiKey = (await createAccount(p.deps, { org: 'sdkruns', tier: 'pro' })).api_key;
    client = createClient({ baseUrl: p.url, apiKey, retry: false, fetch: (request) => p.fetch(request) });
    client.api.use(conformance(problems));
    const published = await p.request('POST', '/agents', {
      key: apiKey,
      body: teller('openai'),
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });

  it('starts a run, follows its events to its result, and waits for it', async () => {
    fake.enqueue({ text: 'once upon', chunks: ['once ', 'upon'], chunkDelayMs: 300 });
    const run = await client.agents.start('sdkruns/teller@v1', { topic: 'tides' });
    assert.equal(run.status, 'running');
    const events = [];
    for await (const e of client.runs.follow(run.run_id)) events.push(e);
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    );
    assert.equal(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.text)
        .join(''),
      'once upon',
    );
    assert.equal(events.at(-1)?.event, 'result');
    const ended = await client.runs.wait(run.run_id, { intervalMs: 50 });
    assert.equal(ended.status, 'succeeded');
    assert.deepEqual(ended.result?.body.data, { text: 'once upon' });
    assert.deepEqual(events.at(-1)?.data, ended.result?.body);
    const later = [];
    for await (const e of client.runs.follow(run.run_id, { after: events.length - 1 })) later.push(e);
    assert.deepEqual(later, events.slice(-1));
    assert.ok((await client.runs.list()).runs.some((r) => r.run_id === run.run_id));
    assert.deepEqual(problems, []);
  });

  it('cancels a run; a refusal before it runs is thrown as the plain call’s error', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'late' };
    });
    try {
      const run = await client.agents.start('sdkruns/teller@v1', { topic: 'x' });
      await waitFor('the model request', () => fake.calls.at(-1));
      const cancelled = await client.runs.cancel(run.run_id);
      assert.equal(cancelled.status, 'cancelled');
      const waited = await client.runs.wait(run.run_id);
      assert.equal(waited.status, 'cancelled');
    } finally {
      release();
      fake.setResponder(undefined);
    }
    await assert.rejects(
      client.agents.start('sdkruns/teller@v1', { nope: 1 } as never),
      (err) => err instanceof AgentHostError && err.code === 'INVALID_INPUT',
    );
    assert.deepEqual(problems, []);
  });

  it('follows from after a run’s last event (a client that read it all) to an end at once, not reopening it', async () => {
    fake.enqueue({ text: 'the end' });
    const run = await client.agents.start('sdkruns/teller@v1', { topic: 'x' });
    const events = [];
    for await (const e of client.runs.follow(run.run_id)) events.push(e);
    assert.equal(events.at(-1)?.event, 'result');
    const last = events.length;
    let opened = 0;
    const counting = createClient({
      baseUrl: p.url,
      apiKey,
      retry: false,
      fetch: (request) => {
        if (request.url.includes('/events')) opened++;
        return p.fetch(request);
      },
    });
    const signal = AbortSignal.timeout(6_000);
    const later = [];
    let outcome = 'ended';
    try {
      for await (const e of counting.runs.follow(run.run_id, { after: last, signal })) later.push(e);
    } catch (err) {
      outcome = `still following after 6 s, the stream opened ${opened} times (${String(err)})`;
    }
    assert.deepEqual({ outcome, later }, { outcome: 'ended', later: [] });
  });
});
