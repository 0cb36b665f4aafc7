import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { offTracer, type Tracer } from '../../functions/ports/tracer.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishWithFiles } from '../helpers/publish.ts';

/**
 * Traces of calls (issue 36, points 1 to 3) on the local platform over real HTTP: the trace id in
 * every answer, the caller's traceparent honoured, the spans of a prompt agent's call, and who may
 * read them.
 */

const TRACE_ID = /^[0-9a-f]{32}$/;

describe('call traces', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let author: { key: string; agentId: string };
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
    p = await startTestPlatform({ OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai });
    const a = await createAccount(p.deps, { org: 'tracer', tier: 'pro' });
    const published = await p.request<{ id: string }>('POST', '/agents', {
      key: a.api_key,
      body: {
        name: 'echo',
        description: 'Echoes.',
        supported_providers: ['openai'],
        is_public: true,
        prompt_template: 'Say {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    });
    assert.equal(published.status, 201, published.text);
    author = { key: a.api_key, agentId: published.body.id };
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
    assert.match(res.headers.get('traceparent') ?? '', new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

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
  });

  it("honours the caller's traceparent, and starts a new trace for a malformed one", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    fake.enqueue({ text: 'one' }, { text: 'two' });
    const res = await call(author.key, { text: 'a' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    assert.equal(res.body.metadata.trace_id, traceId);
    const trace = await traceOf(author.key, res.body.metadata.request_id);
    const root = trace.body.spans.find((s) => s.name.startsWith('call '));
    assert.equal(root?.parent_span_id, '00f067aa0ba902b7');

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

describe('call traces across sandboxed code', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; ws: string };
  const SECRET = 'trace-secret-0f9e8d7c6b5a';
  // Longer than a program's name, with slashes (as base64 keys have): no part of it may show.
  const LONG = `wJalrXUtnFEMI/K7MDENG/${'bPxRfiCYq7Zp'.repeat(6)}EXAMPLEKEY`;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const o = await createAccount(p.deps, { org: 'hops', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    for (const [name, value] of [
      ['HOP_TOKEN', SECRET],
      ['HOP_LONG', LONG],
    ])
      await p.request('PUT', `/workspaces/${owner.ws}/secrets`, { key: owner.key, body: { name, value } });
    await publishWithBundle(p, owner.key, { name: 'leaf', runtime: { command: 'echo \'{"leaf":true}\'' } });
    // An orchestrator's own code (run by its loop's bash tool) calls the leaf with its run
    // credential, passing on its TRACEPARENT (or, as its argument says, another trace's, or none).
    await publishWithBundle(
      p,
      owner.key,
      {
        name: 'relay',
        type: 'agent',
        supported_providers: ['anthropic'],
        prompt_template: 'Go.',
        custom_tools: [{ name: 'call_leaf', description: 'calls the leaf', command: 'call hops/leaf' }],
        manifest: {
          manifest_version: 1,
          dependencies: [{ id: 'hops/leaf', version: 'v1' }],
          max_hops: 2,
          timeout_ms: 60_000,
          orchestration_mode: 'flexible',
        },
      },
      {
        'main.mjs': `const send = process.argv[2];
const traceparent = send === 'own' ? process.env.TRACEPARENT : send === 'none' ? undefined : send;
const r = await fetch(process.env.PLATFORM_API_URL + '/hops/leaf/v1/run', { method: 'POST', body: '{}',
  headers: { authorization: 'Bearer ' + process.env.PLATFORM_SERVICE_KEY, 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) } });
const body = await r.json();
console.log(JSON.stringify({ status: r.status, leaf_request: body.metadata.request_id, leaf_trace: body.metadata.trace_id, traceparent: process.env.TRACEPARENT }));`,
      },
    );
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });

  const relay = async (send: string) => {
    fake.enqueue({ toolCalls: [{ name: 'bash', input: { command: `node main.mjs ${send}` } }] });
    fake.setResponder((call) => ({
      toolCalls: [
        {
          name: 'submit_result',
          input: JSON.parse(/\{.*\}/s.exec(call.toolResults.at(-1)?.content ?? '')?.[0] ?? '{}'),
        },
      ],
    }));
    const res = await p.request<{
      data: { status: number; leaf_request: string; leaf_trace: string; traceparent: string };
      metadata: { request_id: string; trace_id: string };
    }>('POST', '/hops/relay/v1/run', { key: owner.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.status, 200);
    const trace = await p.request<TraceView>(
      'GET',
      `/agents/${await idOf('relay')}/calls/${res.body.metadata.request_id}/trace`,
      {
        key: owner.key,
      },
    );
    assert.equal(trace.status, 200, trace.text);
    return { res: res.body, spans: trace.body.spans };
  };
  const idOf = async (name: string) => {
    const list = await p.request<{ agents: { id: string; name: string }[] }>('GET', `/agents?name=${name}`, {
      key: owner.key,
    });
    const found = list.body.agents.find((a) => a.name === name);
    assert.ok(found, list.text);
    return found.id;
  };

  it("hangs a sub-call that passes on the sandbox's TRACEPARENT under the run's sandbox span", async () => {
    const { res, spans } = await relay('own');
    const sandbox = spans.find((s) => s.name === 'sandbox' && s.request_id === res.metadata.request_id);
    assert.ok(sandbox, spans.map((s) => s.name).join(', '));
    assert.equal(res.data.traceparent, `00-${res.metadata.trace_id}-${sandbox.span_id}-01`);
    assert.equal(res.data.leaf_trace, res.metadata.trace_id, 'the leaf joined the run’s trace');
    const leaf = spans.find((s) => s.name === 'call hops/leaf/v1');
    assert.equal(leaf?.parent_span_id, sandbox.span_id);
    assert.equal(leaf?.request_id, res.data.leaf_request);
    const exec = spans.find((s) => s.name === 'exec node' && s.request_id === res.metadata.request_id);
    assert.equal(exec?.parent_span_id, sandbox.span_id);
    assert.equal(exec?.attributes['process.exit.code'], 0);
  });

  it("keeps a sub-call in its run's trace whatever traceparent its code sends, or none", async () => {
    for (const send of ['none', `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`]) {
      const { res, spans } = await relay(send);
      assert.equal(res.data.leaf_trace, res.metadata.trace_id, `sent ${send}`);
      const root = spans.find((s) => s.name === 'call hops/relay/v1');
      const leaf = spans.find((s) => s.name === 'call hops/leaf/v1');
      assert.equal(leaf?.parent_span_id, root?.span_id, 'under the run’s call span');
    }
  });

  it('keeps what a call stopped at its deadline still had open, ended with its TIMEOUT', async () => {
    await publishWithBundle(p, owner.key, { name: 'sleeper', runtime: { command: 'sleep 20' } });
    const res = await p.request<{ metadata: { request_id: string } }>('POST', '/hops/sleeper/v1/run', {
      key: owner.key,
      body: {},
      headers: { 'x-platform-deadline-ms': String(p.clock.now().getTime() + 1500) },
    });
    assert.equal(res.status, 504, res.text);
    const trace = await p.request<TraceView>(
      'GET',
      `/agents/${await idOf('sleeper')}/calls/${res.body.metadata.request_id}/trace`,
      { key: owner.key },
    );
    const names = trace.body.spans.map((s) => s.name);
    for (const name of ['call hops/sleeper/v1', 'sandbox', 'exec sleep']) {
      const span = trace.body.spans.find((s) => s.name === name);
      assert.equal(span?.status, 'error', `${name} in ${names}`);
      assert.equal(span?.attributes['error.type'], 'TIMEOUT');
    }
    const exec = trace.body.spans.find((s) => s.name === 'exec sleep');
    assert.ok((exec?.duration_ms ?? 0) >= 1000, 'the command ran until the deadline');
  });

  it('redacts the run’s secrets, in their encoded forms, from the spans of its commands', async () => {
    fake.reset();
    await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'runner',
        type: 'agent',
        description: 'Runs what the model says.',
        supported_providers: ['anthropic'],
        required_secrets: ['HOP_TOKEN', 'HOP_LONG'],
        prompt_template: 'Go.',
      },
    });
    const forms = [
      SECRET,
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('hex'),
      encodeURIComponent(SECRET),
      LONG,
      Buffer.from(LONG).toString('hex'),
      Buffer.from(LONG).toString('base64'),
    ];
    fake.enqueue(
      ...forms.map((form) => ({ toolCalls: [{ name: 'bash', input: { command: `${form} --flag` } }] })),
      // A variable assignment before the program: the program is what runs.
      { toolCalls: [{ name: 'bash', input: { command: `TOKEN=${LONG} ls --flag` } }] },
      { toolCalls: [{ name: 'submit_result', input: { ok: true } }] },
    );
    const res = await p.request<{ metadata: { request_id: string } }>('POST', '/hops/runner/v1/run', {
      key: owner.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    const trace = await p.request<TraceView>(
      'GET',
      `/agents/${await idOf('runner')}/calls/${res.body.metadata.request_id}/trace`,
      { key: owner.key },
    );
    const execs = trace.body.spans.filter((s) => s.name.startsWith('exec '));
    assert.equal(execs.length, forms.length + 1, trace.text);
    // No form of either secret, nor any 12 characters of one, in the trace.
    for (const form of forms)
      for (let i = 0; i + 12 <= form.length; i += 6)
        assert.ok(!trace.text.includes(form.slice(i, i + 12)), `part of a secret in ${trace.text}`);
    assert.ok(
      execs.slice(0, -1).every((s) => s.name.startsWith('exec [REDACTED]')),
      execs.map((s) => s.name).join(', '),
    );
    assert.equal(execs.at(-1)?.name, 'exec ls');
    assert.doesNotMatch(trace.text, /--flag/, 'no arguments');
  });
});

/** A tool (or, as `manifest` says, a loop) of `key`'s org, with `files` as its bundle. */
function publishWithBundle(
  p: TestPlatform,
  key: string,
  manifest: Record<string, unknown>,
  files: Record<string, string> = { 'README.md': 'tool' },
): Promise<string> {
  return publishWithFiles(
    p,
    key,
    { type: 'tool', description: String(manifest.name), supported_providers: ['any'], ...manifest },
    files,
  );
}

describe('a tracer that cannot load', () => {
  it('fails no call: the call runs untraced, and the log says why', async () => {
    const fake = await startFakeLlm();
    const broken: Tracer = {
      ...offTracer,
      recording: true,
      ready: async () => {
        throw new Error('Cannot find module otel-tracer.ts');
      },
    };
    const p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      { tracer: broken },
    );
    try {
      const a = await createAccount(p.deps, { org: 'untraced', tier: 'pro' });
      await p.request('POST', '/agents', {
        key: a.api_key,
        body: {
          name: 'echo',
          description: 'Echoes.',
          supported_providers: ['openai'],
          prompt_template: 'Hi',
        },
      });
      fake.enqueue({ text: 'hi' });
      const res = await p.request<{ metadata: Record<string, unknown> }>('POST', '/untraced/echo/v1/run', {
        key: a.api_key,
        body: {},
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.metadata.trace_id, undefined);
      assert.ok(p.logs.some((l) => l.includes('tracer not loaded')));
    } finally {
      await p.close();
      await fake.close();
    }
  });
});
