import { createModuleHandler, type Operations, ProtocolReply } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

/**
 * A stateless MCP server offers no server-to-client stream (GET) and has no session to end
 * (DELETE): MCP's Streamable HTTP transport has the server answer 405, which clients expect.
 */
const methodNotAllowed = async () =>
  new ProtocolReply(
    405,
    { 'Content-Type': 'application/json', Allow: 'POST' },
    JSON.stringify({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages',
      },
      id: null,
    }),
  );

export const operations: Operations<'mcp'> = {
  mcpPost: async ({ deps, auth, query, body, requestId, header }) => {
    // The MCP SDK loads with the first MCP request, not at the Lambda's cold start.
    const { serveMcp } = await import('../platform/mcp-server.ts');
    const answer = await serveMcp(deps, auth, {
      body: body.data,
      header,
      requestId,
      publicRefs: query.public,
    });
    return new ProtocolReply(answer.status, answer.headers, answer.body);
  },
  mcpStream: methodNotAllowed,
  mcpSession: methodNotAllowed,
};

export const handler = createModuleHandler('mcp', operations, lambdaDeps);
