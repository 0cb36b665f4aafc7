import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import {
  type FakeLlmProviders,
  type FakeLlmResponse,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';

/**
 * One trace across three hops and two accounts, on both deployments: alpha's
 * managed loop `planner` calls beta's public managed loop `middle`, which calls beta's public tool
 * `leaf`. The tree, its attributes and what each account sees of it are read back through
 * GET /agents/{id}/calls/{request_id}/trace from each side.
 */

const use = (name: string, input: unknown): FakeLlmResponse => ({ toolCalls: [{ name, input }] });

/** A public managed loop that calls `dependency` (org/name, v1) through its custom tool `call_dep`. */
const relay = (name: string, description: string, dependency: string) => ({
  name,
  type: 'agent',
  description,
  is_public: true,
  supported_providers: ['anthropic'],
  custom_tools: [{ name: 'call_dep', description: `calls ${dependency}`, command: `call ${dependency}` }],
  manifest: {
    manifest_version: 1,
    dependencies: [{ id: dependency, version: 'v1' }],
    max_hops: 3,
    timeout_ms: 60_000,
    orchestration_mode: 'flexible',
  },
});

type Span = TraceView['spans'][number];
const named = (spans: Span[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: Span[], name: string): Span => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as Span;
};

eachDeployment('one trace across agents of two accounts', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let alpha: { key: string };
  let beta: { key: string };
  const ids: Record<string, string> = {};

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    alpha = await d.createAccount('alpha', 'pro');
    beta = await d.createAccount('beta', 'pro');
    const publish = async (key: string, body: Record<string, unknown>) => {
      const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', { key, body });
      assert.equal(res.status, 201, res.text);
      ids[String(body.name)] = res.body.id;
    };
    await publish(beta.key, {
      name: 'leaf',
      type: 'tool',
      description: 'leaf',
      is_public: true,
      supported_providers: ['any'],
      runtime: { command: 'echo \'{"leaf":true}\'' },
    });
    await publish(beta.key, relay('middle', 'Middle: calls the leaf.', 'beta/leaf'));
    const planner = relay('planner', 'Planner: calls the middle.', 'beta/middle');
    await publish(alpha.key, { ...planner, is_public: false });
    // Each loop's first turn calls its dependency; its second submits what it got.
    fake.setResponder((call) => {
      if ((call.toolResults ?? []).length > 0)
        return use('submit_result', { got: String(call.toolResults?.at(-1)?.content ?? '').slice(0, 300) });
      return use('call_dep', {});
    });
  });
  after(async () => {
    await d?.close();
    await fake?.close();
  });

  let traceId: string;
  let plannerRequest: string;

  it("gives alpha its own loop whole, beta's public agent in outline, and beta's leaf not at all", async () => {
    const res = await d.request<{
      data: { got: string };
      metadata: { request_id: string; trace_id: string };
    }>('POST', '/alpha/planner/v1/run', { key: alpha.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.data.got, /leaf/, 'the answer came up all three hops');
    traceId = res.body.metadata.trace_id;
    plannerRequest = res.body.metadata.request_id;
    assert.match(traceId, /^[0-9a-f]{32}$/);

    const seen = await d.request<TraceView>('GET', `/agents/${ids.planner}/calls/${plannerRequest}/trace`, {
      key: alpha.key,
    });
    assert.equal(seen.status, 200, seen.text);
    const spans = seen.body.spans;
    assert.equal(seen.body.trace_id, traceId);
    const root = one(spans, 'call alpha/planner/v1');
    assert.equal(root.parent_span_id, null);
    assert.equal(root.visibility, 'whole');
    const sandbox = one(spans, 'sandbox');
    assert.equal(sandbox.parent_span_id, root.span_id);
    const turns = spans.filter((s) => s.name.startsWith('chat ') && s.request_id === plannerRequest);
    assert.equal(turns.length, 2, 'two model turns');
    for (const turn of turns) {
      assert.equal(turn.attributes['gen_ai.provider.name'], 'anthropic');
      assert.equal(typeof turn.attributes['gen_ai.usage.input_tokens'], 'number');
    }
    const hop = one(spans, 'invoke_agent beta/middle');
    assert.equal(hop.status, 'ok');
    // The middle's call hangs under the hop, in outline: its timing and outcome, nothing of its run.
    const middle = one(spans, 'call beta/middle/v1');
    assert.equal(middle.parent_span_id, hop.span_id);
    assert.equal(middle.visibility, 'outline');
    assert.equal(middle.attributes['agenthost.outcome'], 'success');
    // The middle's call begins within the hop that sent it (each side's clock in whole ms). Its end
    // is not bound by the hop's: the called side ends its span when it writes the call's record,
    // which may come after the caller has its answer.
    assert.ok(middle.duration_ms > 0, `middle: ${middle.duration_ms} ms`);
    const [middleStart, hopStart] = [Date.parse(middle.start_time), Date.parse(hop.start_time)];
    assert.ok(
      middleStart >= hopStart - 1 && middleStart <= hopStart + hop.duration_ms + 1,
      `middle starts at ${middle.start_time}, the hop at ${hop.start_time} for ${hop.duration_ms} ms`,
    );
    assert.ok(spans.every((s) => s.request_id === plannerRequest || s.request_id === middle.request_id));
    assert.equal(named(spans, 'call beta/leaf/v1').length, 0, "the middle's own sub-call is not shown");
    assert.ok(seen.body.hidden_spans >= 5, `hidden: ${seen.body.hidden_spans}`);
    assert.doesNotMatch(JSON.stringify(spans.filter((s) => s.visibility === 'outline')), /gen_ai|exec |leaf/);
    ids.middleRequest = middle.request_id;
  });

  it("gives beta its public agent's call and the leaf's whole, in the same trace, and alpha's loop not at all", async () => {
    const seen = await d.request<TraceView>('GET', `/agents/${ids.middle}/calls/${ids.middleRequest}/trace`, {
      key: beta.key,
    });
    assert.equal(seen.status, 200, seen.text);
    assert.equal(seen.body.trace_id, traceId, 'one trace across the hops');
    const spans = seen.body.spans;
    assert.ok(spans.every((s) => s.visibility === 'whole'));
    const middle = one(spans, 'call beta/middle/v1');
    const hop = one(spans, 'invoke_agent beta/leaf');
    assert.equal(hop.parent_span_id, middle.span_id);
    const leaf = one(spans, 'call beta/leaf/v1');
    assert.equal(leaf.parent_span_id, hop.span_id);
    const exec = spans.find((s) => s.request_id === leaf.request_id && s.name === 'exec echo');
    assert.ok(exec, spans.map((s) => s.name).join(', '));
    assert.equal(exec.attributes['process.exit.code'], 0);
    assert.equal(exec.attributes['process.executable.name'], 'echo');
    // The ECS runner measures a command's CPU time (its reaped children's); locally it is not measured.
    if (kind === 'emulated') assert.equal(typeof exec.attributes['agenthost.cpu_ms'], 'number');
    assert.equal(named(spans, 'call alpha/planner/v1').length, 0, "alpha's loop is not beta's to see");

    const refused = await d.request('GET', `/agents/${ids.planner}/calls/${plannerRequest}/trace`, {
      key: beta.key,
    });
    assert.equal(refused.status, 404, refused.text);
    // Alpha called the middle (through its run): it reads the middle's call in outline.
    const asCaller = await d.request<TraceView>(
      'GET',
      `/agents/${ids.middle}/calls/${ids.middleRequest}/trace`,
      { key: alpha.key },
    );
    assert.equal(asCaller.status, 200, asCaller.text);
    assert.deepEqual(
      asCaller.body.spans.map((s) => s.name),
      ['call beta/middle/v1'],
    );
    // The middle's own sub-call was made on alpha's account, but it is beta's internals: read
    // directly, alpha gets what a stranger gets.
    const inner = await d.request('GET', `/agents/${ids.leaf}/calls/${leaf.request_id}/trace`, {
      key: alpha.key,
    });
    assert.equal(inner.status, 404, inner.text);
  });
});
