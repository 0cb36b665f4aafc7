/**
 * The agent addresses the CLI accepts: `org/name`, `org/name@v2` or `org/name/v2`, each optionally
 * with `/endpoint`. Without a version the CLI calls the newest live one, as a person expects: from
 * the caller's own workspaces first, then the public directory (which lists each agent's newest).
 */
import { parseAgentRef } from '../../sdk/src/call.ts';
import type { Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';

export interface AgentAddress {
  org: string;
  agent: string;
  version: string;
  endpoint?: string;
}

export async function resolveAgentRef(client: Client, text: string): Promise<AgentAddress> {
  if (/^[^/@]+\/[^/@]+(?:@|\/)v[1-9][0-9]*(?:\/[^/]+)?$/.test(text)) return parseAgentRef(text);
  const m = /^([^/@]+)\/([^/@]+)(?:\/([^/@]+))?$/.exec(text);
  if (!m)
    throw new CliError(
      `not an agent address: ${text}`,
      EXIT.usage,
      'write org/name, org/name@v2 or org/name@v2/endpoint',
    );
  const [, org = '', agent = '', endpoint] = m;
  const version =
    (await newestOwnVersion(client, org, agent)) ?? (await newestPublicVersion(client, org, agent));
  if (!version)
    throw new CliError(
      `no agent ${org}/${agent} that this key may call`,
      EXIT.notFound,
      'check the name, or name a version: org/name@v1',
    );
  return { org, agent, version, ...(endpoint ? { endpoint } : {}) };
}

async function newestOwnVersion(client: Client, org: string, name: string): Promise<string | undefined> {
  // Listed newest version first per name (core/agents/agents.ts listAgents).
  const { agents } = await client.agents.list({ name, limit: 200 });
  return agents.find((a) => a.org === org && a.name === name)?.version;
}

async function newestPublicVersion(client: Client, org: string, name: string): Promise<string | undefined> {
  for await (const a of client.public.iterate({}, 200))
    if (a.org === org && a.name === name) return a.version;
  return undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One of the caller's own agent versions, by id or by address (`org/name` is its newest version):
 * what the owner commands (get, logs, delete, versions) act on.
 */
export async function findOwnAgent(client: Client, text: string) {
  if (UUID.test(text)) return client.agents.get(text);
  const m = /^([^/@]+)\/([^/@]+)(?:(?:@|\/)(v[1-9][0-9]*))?$/.exec(text);
  if (!m)
    throw new CliError(
      `not an agent id or address: ${text}`,
      EXIT.usage,
      'write an id, org/name or org/name@v2',
    );
  const [, org, name, version] = m;
  const { agents } = await client.agents.list({ name: name ?? '', limit: 200 });
  const found = agents.find((a) => a.org === org && a.name === name && (!version || a.version === version));
  if (!found)
    throw new CliError(
      `no agent ${text} in your workspaces`,
      EXIT.notFound,
      'list yours with `agenthost agents list`',
    );
  return found;
}
