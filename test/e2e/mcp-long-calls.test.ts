import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { teller } from '../helpers/manifests.ts';
import { connectMcp, postMcpAs } from '../helpers/mcp-client.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A long MCP tool call on both deployments. A `tools/call` with a progress token is a streamed
 * call, given a streamed call's deadline (up to 300 s); behind a buffered integration on AWS a
 * 40 s call would get API Gateway's 504 at 29 s and leave no call record, and its function, killed
 * at 34 s, would leave its concurrency slot held until the lease's expiry, about 5.5 minutes. The
 * route streams on AWS as the call route does: the call runs its
 * 40 s, its progress arrives as it runs, it is recorded, and right after it the account's whole
 * concurrency is usable at once. A client that leaves such a call's stream ends the call (its
 * record says so at once, not when the model would have finished) and frees its slot. Real time,
 * as test/e2e/streamed-calls.test.ts's 40 s call: the synthesized assembly's limits (API Gateway's
 * 29 s, the function's timeout) are the deployment's own, not scaled for the test (another
 * callTimeoutSeconds would need a synthesis of its own, a minute or two of both cores), and the two
 * deployments run side by side.
 */

const CHUNKS = ['one ', 'two ', 'three ', 'four ', 'five'];
/** The fake model's pause before each piece: five of them, 40 s in all. */
const CHUNK_DELAY_MS = 8_000;
/** The free tier's concurrency: the slots the account must have free after the long call. */
const SLOTS = TIER_LIMITS.free.concurrentRequests;

interface BatchAnswer {
  id: number;
  result?: { isError?: boolean; structuredContent?: { text?: string } };
  error?: unknown;
}

eachDeployment('a long MCP tool call', { timeout: 240_000 }, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let client: Client | undefined;
  let key = '';
  const org = `mcplong-${kind}`;

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    });
    key = (await d.createAccount(org, 'free')).key;
    const published = await d.request('POST', '/agents', {
      key,
      body: teller('openai', 'gpt-test-mini'),
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await client?.close();
    await d?.close();
    await fake?.close();
  });

  /**
   * The account's whole concurrency at once: a JSON-RPC batch of as many tool calls as it has
   * slots, each held by the model until all have reached it (so all are in flight together). A
   * slot still held by an earlier call keeps one from ever getting there.
   */
  const allSlotsAtOnce = async () => {
    fake.reset();
    let arrived = 0;
    let release = () => {};
    const allIn = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      if (++arrived === SLOTS) release();
      await allIn;
      return { text: 'at once' };
    });
    const batch = Array.from({ length: SLOTS }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: `${org}__teller`, arguments: { topic: `t${i}` } },
    }));
    const answer = await postMcpAs(d.url, key, {}, batch);
    assert.equal(answer.status, 200, answer.body);
    const answers = JSON.parse(answer.body) as BatchAnswer[];
    assert.equal(answers.length, SLOTS, answer.body);
    for (const a of answers) {
      assert.notEqual(a.result?.isError, true, JSON.stringify(a));
      assert.deepEqual(a.result?.structuredContent, { text: 'at once' }, JSON.stringify(a));
    }
    assert.equal(arrived, SLOTS);
    fake.reset();
  };
  const recordOf = (requestId: string, timeoutMs?: number) =>
    waitFor(
      `the record of ${requestId}`,
      async () => {
        const page = await d.request<{
          logs: { request_id: string; status: string; error_code: string | null }[];
        }>('GET', '/usage/logs', { key });
        return page.body.logs?.find((l) => l.request_id === requestId);
      },
      timeoutMs,
    );

  it('runs 40 s with its progress as it comes, is recorded, and leaves every slot of the account free', async () => {
    fake.enqueue({ text: CHUNKS.join(''), chunks: CHUNKS, chunkDelayMs: CHUNK_DELAY_MS });
    client = await connectMcp(d.url, key);
    const started = Date.now();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: `${org}__teller`, arguments: { topic: 'slowly' } },
      undefined,
      {
        onprogress: () => void progress.push(Date.now() - started),
      },
    );
    const took = Date.now() - started;
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.structuredContent, { text: CHUNKS.join('') });
    assert.ok(took >= 40_000, `the call took its 40 s (${took} ms)`);
    // Sent as the model wrote, not buffered to the end: the first piece long before API
    // Gateway's 29 s for a buffered answer.
    assert.equal(progress.length, CHUNKS.length, JSON.stringify(progress));
    assert.ok((progress[0] ?? took) < 20_000, `the first progress at ${progress[0]} ms`);

    // Its record: the call is in the caller's usage log, a success.
    const meta = result._meta?.['agenthost/call'] as { request_id?: string } | undefined;
    const requestId = meta?.request_id ?? '';
    assert.equal((await recordOf(requestId)).status, 'success');

    // Right after it, the account's whole concurrency at once.
    await allSlotsAtOnce();
  });
  it('ends a streamed tool call whose client hung up, its slot with it', async () => {
    // Four pieces left after the first: 32 s more, had the call gone on without its client.
    fake.enqueue({ text: CHUNKS.join(''), chunks: CHUNKS, chunkDelayMs: CHUNK_DELAY_MS });
    const left = new AbortController();
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: `${org}__teller`, arguments: { topic: 'x' }, _meta: { progressToken: 'p' } },
      }),
      signal: left.signal,
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id') ?? '';
    const { events } = await readEventStream(res, Date.now(), (e) =>
      e.data.includes('notifications/progress'),
    );
    assert.equal(events.length, 1, JSON.stringify(events));
    left.abort();
    // Recorded as a call its caller left (TIMEOUT, as a streamed call's hang-up is), long before
    // its model would have ended.
    const record = await recordOf(requestId, 15_000);
    assert.equal(record.status, 'timeout');
    assert.equal(record.error_code, 'TIMEOUT');
    await allSlotsAtOnce();
  });
});
