import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { traceKeys } from '../../functions/core/traces/trace-record.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { callRecordKeys } from '../../functions/core/usage/call-records.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishPromptAgent } from '../helpers/publish.ts';

/**
 * Traces of calls on the local platform over real HTTP: the trace id in
 * every answer, the caller's traceparent honoured, the spans of a prompt agent's call, and who may
 * read them.
 */

const TRACE_ID = /^[0-9a-f]{32}$/;

describe('call traces', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let author: { key: string; agentId: string; workspaceId: string };
  let stranger: string;
  let paidAgentId: string;

  const call = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    p.request<{ data: Record<string, unknown>; metadata: { request_id: string; trace_id?: string } }>(
      'POST',
      '/tracer/echo/v1/run',
      { key, body, headers },
    );
  const traceOf = (key: string, requestId: string, agentId = author.agentId) =>
    p.request<TraceView>('GET', `/agents/${agentId}/calls/${requestId}/trace`, { key });

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
    const a = await createAccount(p.deps, { org: 'tracer', tier: 'pro' });
    const agentId = await publishPromptAgent(p, a.api_key, {
      is_public: true,
      prompt_template: 'Say {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    author = { key: a.api_key, agentId, workspaceId: a.workspace_id };
    const paid = await p.request<{ id: string }>('POST', '/agents', {
      key: a.api_key,
      body: {
        name: 'oracle',
        description: 'Paid answers.',
        supported_providers: ['openai'],
        is_public: true,
        price_credits: 5,
      },
    });
    assert.equal(paid.status, 201, paid.text);
    paidAgentId = paid.body.id;
    stranger = (await createAccount(p.deps, { org: 'stranger', tier: 'pro' })).api_key;
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it("answers with the call's trace id, and its owner reads the call's spans with the model's tokens and no prompt", async () => {
    fake.enqueue({ text: 'hello', usage: { inputTokens: 12, outputTokens: 3 } });
    const res = await call(author.key, { text: 'the secret word is xyzzy' });
    assert.equal(res.status, 200, res.text);
    const traceId = res.body.metadata.trace_id;
    assert.match(traceId ?? '', TRACE_ID);
    assert.equal(res.headers.get('x-trace-id'), traceId);
    // A trace the call began is named by its request id (docs/traces.md, "The trace of a call").
    assert.equal(traceId, res.body.metadata.request_id.slice(4).replaceAll('-', ''));
    assert.equal(res.headers.get('traceparent'), null, 'a request header, not an answer’s (docs/traces.md)');

    const trace = await traceOf(author.key, res.body.metadata.request_id);
    assert.equal(trace.status, 200, trace.text);
    assert.equal(trace.body.trace_id, traceId);
    const names = trace.body.spans.map((s) => s.name);
    assert.deepEqual(names, ['call tracer/echo/v1', 'admission', `chat ${fake.calls[0]?.model}`]);
    const root = trace.body.spans.find((s) => s.name === 'call tracer/echo/v1');
    const model = trace.body.spans.find((s) => s.name.startsWith('chat '));
    assert.ok(root && model, JSON.stringify(trace.body));
    assert.equal(root.parent_span_id, null);
    assert.equal(root.attributes['agenthost.outcome'], 'success');
    assert.equal(root.attributes['http.response.status_code'], 200);
    assert.equal(model.parent_span_id, root.span_id);
    assert.equal(model.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(model.attributes['gen_ai.usage.input_tokens'], 12);
    assert.equal(model.attributes['gen_ai.usage.output_tokens'], 3);
    assert.equal(model.visibility, 'whole');
    assert.doesNotMatch(trace.text, /xyzzy/, 'no prompt text in any span');

    // On this clock (months back) the call keeps the clock's time: its line is indexed by its id
    // and its record links nothing (test/api/trace-lookup.test.ts reads the other way).
    const requestId = res.body.metadata.request_id;
    const indexed = await p.deps.store.query({ index: 'gsi2', pk: traceKeys.ofCall(requestId) });
    assert.equal(indexed.items.length, 1);
    const records = await p.deps.store.query({
      index: 'gsi1',
      pk: callRecordKeys.authorPk(author.workspaceId),
    });
    const record = records.items.find((r) => r.request_id === requestId);
    assert.ok(record && !('log_at' in record), JSON.stringify(record));
  });

  it("honours the caller's traceparent, and starts a new trace for a malformed one", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    fake.enqueue({ text: 'one' }, { text: 'two' });
    const res = await call(author.key, { text: 'a' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    assert.equal(res.body.metadata.trace_id, traceId);
    const trace = await traceOf(author.key, res.body.metadata.request_id);
    const root = trace.body.spans.find((s) => s.name.startsWith('call '));
    assert.equal(root?.parent_span_id, '00f067aa0ba902b7');
    // The caller's trace id is stored with the line, not taken for the request id's.
    assert.equal(trace.body.trace_id, traceId);

    const bad = await call(
      author.key,
      { text: 'b' },
      { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` },
    );
    assert.equal(bad.status, 200, bad.text);
    assert.match(bad.body.metadata.trace_id ?? '', TRACE_ID);
    assert.notEqual(bad.body.metadata.trace_id, '0'.repeat(32));
  });

  it('names the trace of a failed call in its error envelope and header', async () => {
    fake.enqueue({ status: 500 });
    const res = await call(author.key, { text: 'c' });
    assert.equal(res.status, 502, res.text);
    const body = res.body as unknown as { metadata: { request_id: string; trace_id?: string } };
    assert.match(body.metadata.trace_id ?? '', TRACE_ID);
    assert.equal(res.headers.get('x-trace-id'), body.metadata.trace_id);
    const trace = await traceOf(author.key, body.metadata.request_id);
    const root = trace.body.spans.find((s) => s.name.startsWith('call '));
    assert.equal(root?.status, 'error');
    assert.equal(root?.attributes['error.type'], 'LLM_ERROR');
    assert.equal(trace.body.spans.find((s) => s.name.startsWith('chat '))?.status, 'error');
  });

  it("shows a public agent's caller the call's timing and outcome only, and nobody else anything", async () => {
    fake.enqueue({ text: 'hi', usage: { inputTokens: 5, outputTokens: 1 } });
    const res = await call(stranger, { text: 'd' });
    assert.equal(res.status, 200, res.text);
    const requestId = res.body.metadata.request_id;
    const seen = await traceOf(stranger, requestId);
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(seen.body.spans.map((s) => s.name).sort(), ['admission', 'call tracer/echo/v1']);
    assert.ok(seen.body.spans.every((s) => s.visibility === 'outline'));
    assert.equal(seen.body.hidden_spans, 1, 'the model request is hidden');
    assert.doesNotMatch(seen.text, /gen_ai|gpt|openai/);
    // The author sees it whole.
    const whole = await traceOf(author.key, requestId);
    assert.ok(whole.body.spans.some((s) => s.name.startsWith('chat ')));
    // A third account, an unknown request and the wrong agent: 404 alike.
    const third = (await createAccount(p.deps, { org: 'third', tier: 'pro' })).api_key;
    for (const [key, id, agent] of [
      [third, requestId, author.agentId],
      [author.key, 'req_unknown', author.agentId],
      [author.key, requestId, 'not-the-agent'],
    ] as const) {
      const refused = await traceOf(key, id, agent);
      assert.equal(refused.status, 404, refused.text);
      assert.equal(errorOf(refused).code, 'NOT_FOUND');
    }
  });

  it("lets no one join another's trace by its id, though a trace the platform began is named by its request id", async () => {
    fake.enqueue({ text: 'own' }, { text: 'joined' });
    const own = await call(author.key, { text: 'e' });
    const ownRequest = own.body.metadata.request_id;
    const ownTrace = own.body.metadata.trace_id;
    assert.equal(ownTrace, ownRequest.slice(4).replaceAll('-', ''));
    // Another account sends that trace id (learnt, or worked out from a request id) as its parent.
    const joined = await call(stranger, { text: 'f' }, { traceparent: `00-${ownTrace}-00f067aa0ba902b7-01` });
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.metadata.trace_id, ownTrace, 'the header is honoured as a parent');
    const theirs = await traceOf(stranger, joined.body.metadata.request_id);
    assert.deepEqual(
      theirs.body.spans.map((s) => s.name).sort(),
      ['admission', 'call tracer/echo/v1'],
      'only its own call, in outline',
    );
    const mine = await traceOf(author.key, ownRequest);
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.spans.length, 3, 'the author’s trace holds none of the stranger’s call');
    const mineIds = new Set(mine.body.spans.map((s) => s.span_id));
    assert.ok(
      theirs.body.spans.every((s) => !mineIds.has(s.span_id)),
      'nor theirs any of the author’s',
    );
    assert.equal((await traceOf(stranger, ownRequest)).status, 404, 'nor can the stranger read it');
  });

  it("shows a refused call's caller its outline too, however few spans it has", async () => {
    const res = await p.request<{ metadata: { request_id: string; trace_id: string } }>(
      'POST',
      '/tracer/oracle/v1/run',
      { key: stranger, body: {} },
    );
    assert.equal(res.status, 402, res.text);
    assert.match(res.body.metadata.trace_id, TRACE_ID);
    const seen = await traceOf(stranger, res.body.metadata.request_id, paidAgentId);
    assert.equal(seen.status, 200, seen.text);
    assert.ok(
      seen.body.spans.every((s) => s.visibility === 'outline'),
      seen.text,
    );
    assert.doesNotMatch(seen.text, /agenthost\.agent\.id|agenthost\.endpoint/);
  });

  it('bounds what a caller-given model name takes in a span', async () => {
    fake.enqueue({ text: 'ok' });
    const model = `m${'x'.repeat(4000)}`;
    const res = await call(author.key, { text: 'e' }, { 'x-platform-model': model });
    assert.equal(res.status, 200, res.text);
    const trace = await traceOf(author.key, res.body.metadata.request_id);
    const span = trace.body.spans.find((s) => s.name.startsWith('chat '));
    assert.ok(span, trace.text);
    assert.ok(span.name.length <= 256, `a name of ${span.name.length}`);
    assert.ok(String(span.attributes['gen_ai.request.model']).length <= 256);
  });
});
