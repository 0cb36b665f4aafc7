/*
 * The MCP endpoint (docs/mcp.md): the agents a caller may call, as the tools of a stateless MCP
 * server over Streamable HTTP. Spread into the route table in functions/platform/routes.ts, whose
 * order they keep. GET and DELETE /mcp (the server-to-client stream, ending a session) are not
 * routes: a stateless server has neither, and the platform's 405 with Allow: POST answers them
 * (docs/http.md), which MCP clients expect.
 */

import * as z from 'zod';
import { MAX_MCP_BODY_BYTES, mcpQuery } from '../../core/mcp/mcp-schemas.ts';
import { route } from './route-def.ts';

const jsonRpcAnswer = z
  .unknown()
  .describe('A JSON-RPC response, or an array of them (MCP Streamable HTTP, JSON response mode)');

export const mcpRoutes = {
  mcpPost: route({
    method: 'POST',
    path: '/mcp',
    module: 'mcp',
    auth: 'api-key',
    protocol: 'mcp',
    summary:
      'MCP (Streamable HTTP, stateless): the agents of the caller’s workspaces, and the public agents named in ?public=, as tools',
    description:
      'A stateless MCP server over Streamable HTTP (docs/mcp.md): tools/list and tools/call, each tool an agent the caller may call (a tool call is an agent call: quota, credits, record). The answer is JSON-RPC as MCP has it, or an SSE stream for a tool call that asks for progress; 403 for a Host or Origin the platform does not answer under.',
    tag: 'MCP',
    query: mcpQuery,
    binaryBody: { maxBytes: MAX_MCP_BODY_BYTES, contentTypes: ['application/json'] },
    // A Host or Origin the platform does not answer under (DNS-rebinding protection, docs/mcp.md).
    errors: ['FORBIDDEN'],
    success: {
      status: 200,
      schema: jsonRpcAnswer,
      description:
        'The JSON-RPC answer (202 with no body for notifications; JSON-RPC errors with 400, 406 or 415)',
    },
  }),
} as const;
