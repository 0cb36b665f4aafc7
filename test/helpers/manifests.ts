/**
 * Manifests the manifest tests start from (test/core/manifest*.test.ts): a prompt agent, a tool, a
 * managed-loop agent and an orchestrator with one dependency, and assertions on what
 * parseManifest answers for an input; and `teller`, the prompt agent the streamed and long calls'
 * tests publish.
 */
import assert from 'node:assert/strict';
import { type Manifest, parseManifest } from '../../functions/core/agents/manifest.ts';
import type { FieldIssue } from '../../functions/shared/errors.ts';

export type Input = Record<string, unknown>;
type Options = { allowNoSecrets?: boolean };

export const prompt: Input = {
  name: 'summarize',
  description: 'Summarises text',
  supported_providers: ['anthropic'],
};
export const tool: Input = {
  name: 'scraper',
  type: 'tool',
  description: 'Scrapes a page',
  supported_providers: ['any'],
  required_secrets: ['SCRAPER_TOKEN'],
  runtime: { command: 'python main.py' },
};
/** A prompt agent that tells about a `topic`, through `provider` (with `defaultModel` when named). */
export function teller(provider: string, defaultModel?: string) {
  return {
    name: 'teller',
    description: 'Tells.',
    supported_providers: [provider],
    ...(defaultModel ? { default_models: { [provider]: defaultModel } } : {}),
    prompt_template: 'Tell {{topic}}',
    input_schema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  };
}
export const agent: Input = {
  name: 'researcher',
  type: 'agent',
  description: 'Researches a topic',
  supported_providers: ['anthropic'],
  required_secrets: ['ANTHROPIC_API_KEY'],
};
export const orchestrator: Input = {
  ...agent,
  name: 'orchestrator',
  custom_tools: [
    {
      name: 'summarize',
      description: 'Summarise with acme/summarize',
      command: 'agenthost call acme/summarize/v3 --text {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ],
  manifest: {
    manifest_version: 1,
    dependencies: [{ id: 'acme/summarize', version: 'v3' }],
    max_hops: 2,
    timeout_ms: 120_000,
  },
};

export function ok(input: unknown, options?: Options): Manifest {
  const r = parseManifest(input, options);
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(!r.ok && r.issues)}`);
  return r.manifest;
}

export function issuesOf(input: unknown, options?: Options): FieldIssue[] {
  const r = parseManifest(input, options);
  assert.equal(r.ok, false, 'expected issues');
  return r.ok ? [] : r.issues;
}

export function assertIssue(input: unknown, field: string, fragment: string, options?: Options) {
  const issues = issuesOf(input, options);
  assert.ok(
    issues.some((i) => i.field === field && i.message.includes(fragment)),
    `expected ${field}: "${fragment}" in ${JSON.stringify(issues)}`,
  );
}

export const withManifest = (over: Input): Input => ({
  ...orchestrator,
  manifest: { ...(orchestrator.manifest as Input), ...over },
});
