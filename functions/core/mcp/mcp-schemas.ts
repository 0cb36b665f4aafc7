import * as z from 'zod';

/**
 * A POST /mcp body (JSON-RPC messages) may be at most this large: the MCP SDK transport's own
 * default, well under Lambda's 6 MB request payload. It is read into memory, so it stays small;
 * files do not go through MCP (docs/mcp.md).
 */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** At most this many public agents in one `?public=` selection (each is looked up per request). */
export const MAX_PUBLIC_SELECTION = 50;
const AGENT_REF = /^[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9][a-z0-9-]{0,63}$/;

/**
 * POST /mcp's query: `public`, a comma-separated list of public agents (`org/name`) to offer as
 * tools besides the agents of the caller's workspaces (docs/mcp.md, "Public agents").
 */
export const mcpQuery = z.strictObject({
  public: z
    .string()
    .max(MAX_PUBLIC_SELECTION * 105)
    .optional()
    .describe('Comma-separated public agents (org/name) to offer as tools too, at most 50')
    .transform((value, ctx) => {
      const refs = [
        ...new Set(
          (value ?? '')
            .split(',')
            .map((r) => r.trim())
            .filter(Boolean),
        ),
      ];
      const bad = refs.filter((r) => !AGENT_REF.test(r));
      if (bad.length > 0)
        ctx.addIssue({
          code: 'custom',
          message: `must be comma-separated agents such as org/name (not ${bad
            .slice(0, 3)
            .map((r) => JSON.stringify(r))
            .join(', ')})`,
        });
      if (refs.length > MAX_PUBLIC_SELECTION)
        ctx.addIssue({ code: 'custom', message: `names at most ${MAX_PUBLIC_SELECTION} agents` });
      return refs;
    }),
});

export type McpQuery = z.output<typeof mcpQuery>;
