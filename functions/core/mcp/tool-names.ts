/**
 * The MCP tool name of an agent (docs/mcp.md, "Tool names"). MCP tool names may use
 * [A-Za-z0-9_.-]; org slugs and agent names use only [a-z0-9-], so `org__name` is unambiguous
 * (neither half can contain `_`) and also fits clients that allow no dots in tool names (the
 * Anthropic and OpenAI tool-use APIs, which MCP hosts pass tool names on to).
 */
const SEPARATOR = '__';
const TOOL_NAME = /^([a-z0-9][a-z0-9-]{0,38})__([a-z0-9][a-z0-9-]{0,63})$/;

export function toolNameOf(org: string, name: string): string {
  return `${org}${SEPARATOR}${name}`;
}

/** The agent a tool name stands for, or undefined for a name no agent can have. */
export function agentOfToolName(tool: string): { org: string; name: string } | undefined {
  const m = TOOL_NAME.exec(tool);
  if (!m) return undefined;
  return { org: m[1] as string, name: m[2] as string };
}
