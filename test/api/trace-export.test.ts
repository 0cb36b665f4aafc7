import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { type Clock, systemClock } from '../../functions/ports/clock.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishPromptAgent, publishWithFiles } from '../helpers/publish.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Exporting traces: with the standard OTEL_* variables the platform's spans go
 * to an OTLP receiver on loopback, in protobuf or JSON, the same spans it stores; with none, or
 * OTEL_TRACES_EXPORTER=none, nothing is sent; a collector that never answers neither fails nor
 * holds up a call, and the spans it cost are counted as dropped.
 */

/** Set for an exporter alone, never stored (functions/core/traces/stored-attributes.ts). */
const EXPORTED_ONLY = [
  'http.request.method',
  'http.route',
  'url.path',
  'url.scheme',
  'gen_ai.response.id',
  'gen_ai.response.model',
];
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('trace export over OTLP', () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  /**
   * A platform with `env`, a fake OpenAI and a public prompt agent `exp/echo` of its own; on the
   * test helper's fixed clock unless `clock` is given (the real one: see `line`).
   */
  const platform = async (env: Record<string, string>, clock?: Clock) => {
    const fake: FakeLlmProviders = await startFakeLlm();
    closers.push(() => fake.close());
    const p: TestPlatform = await startTestPlatform(
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: fake.baseUrls.openai,
        ...env,
      },
      'sqlite',
      clock ? { clock } : {},
      { inMemory: true },
    );
    closers.push(() => p.close());
    const a = await createAccount(p.deps, { org: 'exp', tier: 'pro' });
    const agentId = await publishPromptAgent(p, a.api_key, { prompt_template: 'Say hi' });
    fake.setResponder(() => ({ text: 'hi', usage: { inputTokens: 7, outputTokens: 2 } }));
    const call = async () => {
      const res = await p.request<{ metadata: { request_id: string; trace_id: string } }>(
        'POST',
        '/exp/echo/v1/run',
        {
          key: a.api_key,
          body: {},
        },
      );
      assert.equal(res.status, 200, res.text);
      return res.body.metadata;
    };
    const stored = async (requestId: string) =>
      (
        await p.request<TraceView>('GET', `/agents/${agentId}/calls/${requestId}/trace`, {
          key: a.api_key,
        })
      ).body;
    /**
     * The call's own log line as stored. On the real clock a call's time is its request id's, so
     * its record links the line, which leaves out what the record says (trace-record.ts); on the
     * fixed clock it is not, and the line is indexed by the request id and keeps it.
     */
    const line = async (requestId: string) => {
      const lines = await p.deps.store.query({
        pk: agentKeys.version(agentId).pk,
        sk: { beginsWith: 'LOG#' },
      });
      const found = lines.items.find((l) => l.request_id === requestId && Array.isArray(l.spans));
      assert.ok(found, 'the call’s line');
      return found;
    };
    return { p, call, stored, line, key: a.api_key, workspaceId: a.workspace_id };
  };
  const receiver = async (options: { hang?: boolean } = {}) => {
    const r: OtlpReceiver = await startOtlpReceiver(options);
    closers.push(() => r.close());
    return r;
  };

  // Each protocol with one of the two ways a line is stored: linked by its record, which says the
  // call's outcome (the line leaves it out), and indexed by its request id (the line keeps it).
  for (const [protocol, linked] of [
    ['http/protobuf', true],
    ['http/json', false],
  ] as const) {
    it(`sends the spans it stores to the OTLP endpoint (${protocol}, the line ${linked ? 'its record links' : 'indexed'})`, async () => {
      const r = await receiver();
      const { call, stored, line } = await platform(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_BSP_SCHEDULE_DELAY: '20',
          OTEL_SERVICE_NAME: 'agenthost-under-test',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
        },
        linked ? systemClock : undefined,
      );
      const { request_id, trace_id } = await call();
      const ownLine = await line(request_id);
      assert.equal(ownLine.gsi2pk === undefined, linked, 'the line indexed by its request id, or not');
      const rootAttributes = ((ownLine.spans as unknown[][])[0] as unknown[])[6];
      if (linked) assert.deepEqual(rootAttributes, [], 'the call span’s outcome left to its record');
      else assert.ok(Array.isArray(rootAttributes) && rootAttributes.length > 0, 'kept on the line');
      const spans = await waitFor('the call’s three spans at the receiver', () => {
        const got = r.spans.filter((s) => s.traceId === trace_id);
        return got.length >= 3 ? got : undefined;
      });
      assert.ok(r.contentTypes.every((t) => t.includes(protocol === 'http/json' ? 'json' : 'protobuf')));
      const view = await stored(request_id);
      assert.deepEqual(
        spans.map((s) => `${s.spanId} ${s.parentSpanId} ${s.name}`).sort(),
        view.spans.map((s) => `${s.span_id} ${s.parent_span_id ?? ''} ${s.name}`).sort(),
        'the same spans, ids and links as stored',
      );
      // What the stored line leaves out and reads back (its fields, the call's record) is on the
      // exported spans themselves: a collector has nothing else to read it from. What only an
      // exporter reads (the HTTP request, a model answer's id and model) is on them alone.
      for (const span of view.spans) {
        const exported = { ...spans.find((s) => s.spanId === span.span_id)?.attributes };
        for (const name of EXPORTED_ONLY) delete exported[name];
        assert.deepEqual(exported, span.attributes, `${span.name}: the attributes as stored`);
      }
      const model = spans.find((s) => s.name.startsWith('chat '));
      assert.equal(model?.attributes['gen_ai.usage.input_tokens'], 7);
      assert.equal(model?.kind, 3, 'SPAN_KIND_CLIENT');
      // OpenTelemetry's GenAI conventions: the finish reasons a list of the vendor's own, the
      // answer's id and model as the vendor named them.
      assert.deepEqual(model?.attributes['gen_ai.response.finish_reasons'], ['stop']);
      assert.match(String(model?.attributes['gen_ai.response.id']), /^chatcmpl-fake\d+$/);
      assert.equal(typeof model?.attributes['gen_ai.request.model'], 'string');
      assert.equal(model?.attributes['gen_ai.response.model'], model?.attributes['gen_ai.request.model']);
      const storedModel = view.spans.find((s) => s.name.startsWith('chat '));
      assert.deepEqual(
        storedModel?.attributes['gen_ai.response.finish_reasons'],
        ['stop'],
        'a list as stored',
      );
      const root = spans.find((s) => s.name === 'call exp/echo/v1');
      assert.equal(root?.kind, 2, 'SPAN_KIND_SERVER');
      assert.equal(root?.attributes['agenthost.request_id'], request_id);
      // The HTTP server span's conventions: the method, the route's template, the URL's path and scheme.
      assert.deepEqual(
        Object.fromEntries(
          ['http.request.method', 'http.route', 'url.path', 'url.scheme', 'http.response.status_code'].map(
            (name) => [name, root?.attributes[name]],
          ),
        ),
        {
          'http.request.method': 'POST',
          'http.route': '/{org}/{agent}/{version}/{endpoint}',
          'url.path': '/exp/echo/v1/run',
          'url.scheme': 'http',
          'http.response.status_code': 200,
        },
      );
      assert.equal(root?.resource['service.name'], 'agenthost-under-test');
      assert.equal(root?.resource['deployment.environment'], 'test');
      // The resource: the platform's release, and the SDK that put the spans on the wire.
      assert.equal(root?.resource['service.version'], PACKAGE_VERSION);
      assert.equal(root?.resource['telemetry.sdk.name'], 'opentelemetry');
      assert.equal(root?.resource['telemetry.sdk.language'], 'nodejs');
      assert.match(String(root?.resource['telemetry.sdk.version']), /^\d+\.\d+\.\d+/);
    });
  }

  it('sends nothing without an endpoint, or with OTEL_TRACES_EXPORTER=none', async () => {
    const r = await receiver();
    const { call } = await platform({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    const { trace_id } = await call();
    assert.match(trace_id, /^[0-9a-f]{32}$/, 'the trace is still kept');
    // A second platform that does export, to the same receiver: once its spans arrived, the first's
    // would have too.
    const { call: exportingCall } = await platform({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    const other = await exportingCall();
    await waitFor(
      'the exporting platform’s spans',
      () => r.spans.some((s) => s.traceId === other.trace_id) || undefined,
    );
    assert.equal(r.spans.filter((s) => s.traceId === trace_id).length, 0);
  });

  it('answers every call while the collector never answers, and counts the spans it drops', async () => {
    const r = await receiver({ hang: true });
    const { p, call } = await platform({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_BSP_SCHEDULE_DELAY: '10',
      OTEL_BSP_MAX_QUEUE_SIZE: '6',
      OTEL_BSP_EXPORT_TIMEOUT: '60000',
    });
    // 3 spans a call: the first batch goes out and hangs, the queue fills, the rest are dropped.
    for (let i = 0; i < 10; i++) await call();
    const line = await waitFor('a dropped-spans line', () =>
      p.logs.find((l) => l.includes('trace spans dropped')),
    );
    const dropped = Number(/"dropped_total":(\d+)/.exec(line)?.[1]);
    assert.ok(dropped > 0, line);
    assert.match(line, /queue_full/);
  });

  it("exports a service's start, and its supervisor's restart after a crash, each as a trace of its own", async () => {
    const r = await receiver();
    const { p, key, workspaceId } = await platform({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      PLATFORM_SERVICE_BACKOFF_MS: '50',
    });
    const id = await publishWithFiles(
      p,
      key,
      {
        name: 'crasher',
        type: 'tool',
        description: 'Exits at once.',
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        run_mode: 'always_on',
        timeout_seconds: 0,
      },
      { 'server.mjs': "console.error('boom'); process.exit(1);" },
    );
    assert.ok(id);
    const deployed = await p.request<{ id: string }>('POST', `/workspaces/${workspaceId}/services`, {
      key,
      body: { agent: 'exp/crasher' },
    });
    assert.equal(deployed.status, 201, deployed.text);
    const start = await waitFor('a service start span', () =>
      r.spans.find(
        (s) => s.name === 'service start' && s.attributes['agenthost.service.id'] === deployed.body.id,
      ),
    );
    assert.equal(start.parentSpanId, '', 'the root of its own trace');
    assert.equal(start.attributes['agenthost.agent'], 'exp/crasher/v1');
    const restart = await waitFor('a service restart span', () =>
      r.spans.find(
        (s) => s.name === 'service restart' && s.attributes['agenthost.service.id'] === deployed.body.id,
      ),
    );
    assert.equal(restart.statusCode, 2, 'STATUS_CODE_ERROR: it crashed');
    assert.equal(typeof restart.attributes['agenthost.service.restart_delay_ms'], 'number');
    assert.notEqual(restart.traceId, start.traceId);
    await p.request('DELETE', `/workspaces/${workspaceId}/services/${deployed.body.id}`, { key });
  });
});
