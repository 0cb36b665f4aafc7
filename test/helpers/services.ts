import assert from 'node:assert/strict';
import { bundleOf } from './bundles.ts';
import type { TestPlatform } from './platform.ts';

/**
 * Publishes an always-on tool agent with the given files (the entrypoint found by the service
 * host's scan, e.g. server.mjs) through the API, as its author would; returns the agent's id.
 */
export async function publishAlwaysOn(
  p: TestPlatform,
  key: string,
  agent: {
    name: string;
    description: string;
    files: Record<string, string>;
    extra?: Record<string, unknown>;
  },
): Promise<string> {
  const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
    key,
    body: {
      name: agent.name,
      type: 'tool',
      description: agent.description,
      supported_providers: ['any'],
      runtime: { command: 'node server.mjs' },
      run_mode: 'always_on',
      timeout_seconds: 0,
      ...agent.extra,
    },
  });
  assert.equal(res.status, 201, res.text);
  const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
    key,
    rawBody: await bundleOf(agent.files),
    headers: { 'content-type': 'application/gzip' },
  });
  assert.equal(up.status, 200, up.text);
  return res.body.id;
}
