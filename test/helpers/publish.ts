import assert from 'node:assert/strict';
import { bundleOf } from './bundles.ts';
import type { TestPlatform } from './platform.ts';

/**
 * Publishes an agent (its manifest as given) and uploads its files as its bundle, through the API as
 * its author would, on a test platform or a deployment; returns the agent's id.
 */
export async function publishWithFiles(
  p: Pick<TestPlatform, 'request'>,
  key: string,
  manifest: Record<string, unknown>,
  files: Record<string, string>,
): Promise<string> {
  const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
    key,
    body: manifest,
  });
  assert.equal(res.status, 201, res.text);
  const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
    key,
    rawBody: await bundleOf(files),
    headers: { 'content-type': 'application/gzip' },
  });
  assert.equal(up.status, 200, up.text);
  return res.body.id;
}

/**
 * Publishes a prompt agent answered by OpenAI (the tests' fake provider), `echo` unless named: its
 * manifest's other fields as given; returns the agent's id.
 */
export async function publishPromptAgent(
  p: Pick<TestPlatform, 'request'>,
  key: string,
  manifest: Record<string, unknown> = {},
): Promise<string> {
  const res = await p.request<{ id: string }>('POST', '/agents', {
    key,
    body: { name: 'echo', description: 'Echoes.', supported_providers: ['openai'], ...manifest },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}
