import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import { isRecord } from '../../shared/is-record.ts';
import { agentKeys } from '../agents/agent-keys.ts';
import { answersCalls } from '../agents/agent-kinds.ts';
import { findLatest, isCallable } from '../agents/agent-lookup.ts';
import { type AgentVersion, fromItem } from '../agents/agent-record.ts';
import { placeholders } from '../agents/placeholders.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import { agentOfToolName, toolNameOf } from './tool-names.ts';

/*
 * The agents a caller's MCP client sees as tools (POST /mcp, docs/mcp.md): the agents of the
 * caller's workspaces and the public agents the request names. Each agent is one tool, for its
 * newest version that answers calls; skills (attached to calls, never called) and always-on agents
 * (services, reached at their own URLs) are no tools. What a tool call runs is an ordinary agent
 * call (call-agent-tool.ts).
 */

type JsonSchema = Record<string, unknown>;

/** One tool, as MCP's tools/list describes it (plain data: the SDK is the platform layer's). */
export interface AgentTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema?: JsonSchema & { type: 'object' };
  /** Every tool may be called as a task: its call then runs as a run (docs/mcp.md, "Tasks"). */
  execution: { taskSupport: 'optional' };
}

/** The tools of the caller: their workspaces' agents, then the public ones named, by tool name. */
export async function listAgentTools(
  deps: CoreDeps,
  auth: AuthContext,
  publicRefs: readonly string[],
): Promise<AgentTool[]> {
  const now = deps.clock.now();
  const byName = new Map<string, AgentVersion>();
  for (const ws of await workspaceIdsOf(deps, auth)) {
    const versions = (await queryAll(deps.store, { index: 'gsi1', pk: agentKeys.ofWorkspace(ws) }))
      .map(fromItem)
      .filter((a) => !a.deleted_at);
    // Newest version per name first: the first live one of each name decides its tool.
    versions.sort((a, b) => b.version_number - a.version_number);
    const decided = new Set<string>();
    for (const agent of versions) {
      const key = toolNameOf(agent.org, agent.name);
      if (decided.has(key)) continue;
      decided.add(key);
      if (answersAsTool(agent, now)) byName.set(key, agent);
    }
  }
  for (const ref of publicRefs) {
    const [org = '', name = ''] = ref.split('/');
    const key = toolNameOf(org, name);
    if (byName.has(key)) continue;
    const agent = await findLatest(deps, org, name);
    // Unknown, private or not callable: no tool, and no hint which of these it was.
    if (agent?.manifest.is_public && answersAsTool(agent, now)) byName.set(key, agent);
  }
  return [...byName.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, agent]) => toolOf(agent));
}

/**
 * The agent version a tool name stands for, if the caller has that tool: an agent of one of the
 * caller's workspaces, or a public agent the request named. Anything else, an agent that does not
 * exist or another workspace's private agent alike, is undefined: an unknown tool.
 */
export async function resolveAgentTool(
  deps: CoreDeps,
  auth: AuthContext,
  tool: string,
  publicRefs: readonly string[],
): Promise<AgentVersion | undefined> {
  const ref = agentOfToolName(tool);
  if (!ref) return undefined;
  const agent = await findLatest(deps, ref.org, ref.name);
  if (!agent || !answersAsTool(agent, deps.clock.now())) return undefined;
  const named = agent.manifest.is_public && publicRefs.includes(`${ref.org}/${ref.name}`);
  if (named) return agent;
  const member = await deps.store.get(memberKeys.member(agent.workspace_id, auth.accountId));
  return member ? agent : undefined;
}

function answersAsTool(agent: AgentVersion, now: Date): boolean {
  return answersCalls(agent.manifest) && isCallable(agent, now);
}

async function workspaceIdsOf(deps: CoreDeps, auth: AuthContext): Promise<string[]> {
  const memberships = await queryAll(deps.store, { index: 'gsi1', pk: memberKeys.ofAccount(auth.accountId) });
  return memberships.map((m) => String(m.workspace_id));
}

function toolOf(agent: AgentVersion): AgentTool {
  const m = agent.manifest;
  const input = isRecord(m.input_schema) ? objectSchema(m.input_schema) : undefined;
  const output = isRecord(m.output_schema) ? objectSchema(m.output_schema) : undefined;
  return {
    name: toolNameOf(agent.org, agent.name),
    title: `${agent.org}/${agent.name}`,
    description: input ? m.description : `${m.description}\n\n${NO_SCHEMA_NOTE}`,
    inputSchema: input ?? schemaWithoutInputSchema(agent),
    ...(output ? { outputSchema: output } : {}),
    execution: { taskSupport: 'optional' },
  };
}

const NO_SCHEMA_NOTE =
  'This agent declares no input schema: it takes any JSON object, which it receives as its input.';

/**
 * A call's input is always a JSON object, and MCP requires a tool's schemas to be object schemas:
 * a user's schema without `type: "object"` at its root is narrowed to objects, which is what the
 * call accepts anyway. The rest (properties, $defs, annotations) is the agent's own.
 */
function objectSchema(schema: JsonSchema): JsonSchema & { type: 'object' } {
  return { ...schema, type: 'object' };
}

/**
 * The input of an agent without input_schema: any JSON object. A prompt agent's template
 * placeholders must be present (the call answers 400 for a missing one), so they are listed.
 */
function schemaWithoutInputSchema(agent: AgentVersion): JsonSchema & { type: 'object' } {
  const template = agent.manifest.prompt_template;
  const names = typeof template === 'string' ? placeholders(template) : [];
  return {
    type: 'object',
    description: 'Any JSON object: the agent’s input',
    ...(names.length > 0
      ? {
          properties: Object.fromEntries(
            names.map((n) => [
              n,
              { description: `Fills {{${n}}} in the prompt: a string as it is, any other value as JSON` },
            ]),
          ),
          required: names,
        }
      : {}),
    additionalProperties: true,
  };
}
