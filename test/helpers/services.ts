import type { TestPlatform } from './platform.ts';
import { publishWithFiles } from './publish.ts';

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
  return publishWithFiles(
    p,
    key,
    {
      name: agent.name,
      type: 'tool',
      description: agent.description,
      supported_providers: ['any'],
      runtime: { command: 'node server.mjs' },
      run_mode: 'always_on',
      timeout_seconds: 0,
      ...agent.extra,
    },
    agent.files,
  );
}
