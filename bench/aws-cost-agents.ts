/**
 * The agents `npm run bench:aws-cost` (bench/aws-cost.ts) calls: a prompt agent, a loop agent that
 * calls it through its custom tool, a tool (`cat` in the sandbox), and for the long run a prompt
 * agent whose runs may last the run's seconds, published on the emulated deployment as its owner,
 * or, for the sparse tools, each as another account's.
 */
import assert from 'node:assert/strict';
import { bundleOf } from '../test/helpers/bundles.ts';
import type { Deployment } from '../test/helpers/deployment.ts';

/** The prompt agent, the loop agent that calls it, and the steady tool, as the owner. */
export async function setUp(d: Deployment): Promise<void> {
  const publish = async (body: Record<string, unknown>, key?: string) => {
    const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', { body, key });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  await publish({
    name: 'bench-echo',
    description: 'Benchmark prompt agent.',
    supported_providers: ['openai'],
    prompt_template: 'Echo {{text}}',
    input_schema: { type: 'object', properties: { text: { type: 'string' } } },
  });
  await publish({
    name: 'bench-relay',
    type: 'agent',
    description: 'Calls bench-echo.',
    supported_providers: ['anthropic'],
    custom_tools: [
      { name: 'call_dep', description: 'calls local/bench-echo', command: 'call local/bench-echo' },
    ],
    manifest: {
      manifest_version: 1,
      dependencies: [{ id: 'local/bench-echo', version: 'v1' }],
      max_hops: 2,
      timeout_ms: 60_000,
      orchestration_mode: 'flexible',
    },
  });
  await publishCatTool(d, undefined);
}

/**
 * The long run's prompt agent, `bench-long`: its runs (`Prefer: respond-async`) may last
 * `runSeconds` and two minutes more (run_timeout_seconds, up to the platform's hour), where a
 * plain call of it keeps the 300 s request timeout.
 */
export async function publishLongRunAgent(d: Deployment, runSeconds: number): Promise<void> {
  const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
    body: {
      name: 'bench-long',
      description: 'Benchmark prompt agent whose model answers slowly.',
      supported_providers: ['openai'],
      prompt_template: 'Answer {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } } },
      run_timeout_seconds: Math.min(3600, Math.ceil(runSeconds) + 120),
    },
  });
  assert.equal(res.status, 201, res.text);
}

/**
 * Publishes a code tool `name` that echoes its input (`cat`), its bundle uploaded, as the key's
 * account (the owner's without one): what the cost and the ECS sandbox benches call.
 */
export async function publishCatTool(
  d: Deployment,
  key: string | undefined,
  name = 'bench-tool',
): Promise<void> {
  const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
    key,
    body: {
      name,
      type: 'tool',
      description: 'Echoes its input.',
      supported_providers: ['any'],
      runtime: { command: 'cat' },
      required_secrets: [],
    },
  });
  assert.equal(res.status, 201, res.text);
  const up = await d.request('POST', `/agents/${res.body.id}/upload`, {
    key,
    rawBody: await bundleOf({ 'README.md': 'echo' }),
    headers: { 'content-type': 'application/gzip' },
  });
  assert.equal(up.status, 200, up.text);
}

export async function publishTool(d: Deployment, org: string): Promise<{ org: string; key: string }> {
  const { key } = await d.createAccount(org);
  await publishCatTool(d, key);
  return { org, key };
}
