import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { offTracer, type Tracer } from '../../functions/ports/tracer.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishWithFiles } from '../helpers/publish.ts';

/**
 * Traces across sandboxed code on the local platform: a sub-call that
 * passes on the sandbox's TRACEPARENT, or none, or another trace's; a deadline's open spans;
 * secrets in commands' spans; and a tracer that cannot load.
 */

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
    // The command itself hangs under the tool call that ran it.
    const tool = spans.find(
      (s) => s.name === 'execute_tool bash' && s.request_id === res.metadata.request_id,
    );
    const exec = spans.find((s) => s.name === 'exec node' && s.request_id === res.metadata.request_id);
    assert.ok(tool, spans.map((s) => s.name).join(', '));
    assert.equal(exec?.parent_span_id, tool.span_id);
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
      { inMemory: true },
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
