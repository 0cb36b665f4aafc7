import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import {
  type AgentHostClient,
  type AgentHostError,
  createClient,
  type StreamEvent,
} from '../../sdk/src/index.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { teller } from '../helpers/manifests.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** `agents.stream`: the SDK reading a streamed call against the local platform. */

describe('the SDK’s agents.stream', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let client: AgentHostClient;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const key = (await createAccount(p.deps, { org: 'sdkstream', tier: 'pro' })).api_key;
    client = createClient({ baseUrl: p.url, apiKey: key, retry: false, fetch: p.fetch });
    await client.agents.publish(teller('anthropic'));
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('yields the text as it is written, then the result a plain call returns', async () => {
    fake.enqueue({ text: 'once upon a time', chunks: ['once ', 'upon ', 'a time'], chunkDelayMs: 20 });
    const events: StreamEvent<{ text: string }>[] = [];
    for await (const e of client.agents.stream<{ topic: string }, { text: string }>('sdkstream/teller@v1', {
      topic: 'a story',
    }))
      events.push(e);
    assert.deepEqual(
      events.filter((e) => e.type === 'delta').map((e) => e.text),
      ['once ', 'upon ', 'a time'],
    );
    const last = events.at(-1);
    assert.equal(last?.type, 'result');
    if (last?.type !== 'result') return;
    assert.deepEqual(last.result.data, { text: 'once upon a time' });
    assert.equal(last.result.metadata.version, 'v1');
    assert.equal(last.result.headers.get('x-request-id'), last.result.metadata.request_id);
  });

  it('throws a refusal before the stream, and an error event after it, as AgentHostError', async () => {
    await assert.rejects(
      async () => {
        for await (const _ of client.agents.stream('sdkstream/teller@v1', { wrong: 1 })) void _;
      },
      (err: AgentHostError) => err.code === 'INVALID_INPUT' && err.status === 400,
    );
    fake.enqueue({ text: 'a b c', chunks: ['a ', 'b ', 'c'], chunkDelayMs: 20, failAfterChunks: 1 });
    const seen: string[] = [];
    await assert.rejects(
      async () => {
        for await (const e of client.agents.stream('sdkstream/teller@v1', { topic: 'x' })) seen.push(e.type);
      },
      (err: AgentHostError) =>
        err.code === 'LLM_ERROR' && err.status === 502 && typeof err.requestId === 'string',
    );
    assert.deepEqual(seen, ['delta']);
  });

  it('hangs up when the loop is left early, which stops the model request', async () => {
    fake.enqueue({ text: 'a b c d', chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 1000 });
    for await (const e of client.agents.stream('sdkstream/teller@v1', { topic: 'x' })) {
      assert.equal(e.type, 'delta');
      break;
    }
    const outcome = await Promise.race([
      fake.calls[0]?.settled,
      new Promise((resolve) => setTimeout(() => resolve('still streaming'), 2500)),
    ]);
    assert.equal(outcome, 'disconnected');
  });
});
