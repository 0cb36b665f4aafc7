import { protocolAnswer, sseAnswer } from '../edge/answers.ts';
import type { Operations } from '../edge/operations.ts';
import { assertAllowedHost } from '../platform/allowed-hosts.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createStreamedModuleHandler } from './streamed-module-handler.ts';

export const operations: Operations<'mcp'> = {
  mcpPost: async ({ deps, auth, query, body, requestId, gatewayRequestId, header, onDelivered }) => {
    assertAllowedHost(deps.config, header('host'), header('origin'));
    // The MCP SDK loads with the first MCP request, not at the Lambda's cold start.
    const { serveMcp } = await import('../platform/mcp-server.ts');
    const answer = await serveMcp(deps, auth, {
      body: body.data,
      header,
      requestId,
      gatewayRequestId,
      publicRefs: query.public,
      onDelivered,
    });
    // A tool call that asked for progress is answered as the SDK's SSE stream, sent as it comes.
    if (typeof answer.body !== 'string') return sseAnswer(answer.body);
    return protocolAnswer(answer.status, answer.headers, answer.body);
  },
};

// The route's integration streams, as the call route's (lib/stateless-stack.ts): a tool call with a
// progress token is answered as SSE as it runs, and may run a streamed call's deadline.
export const handler = createStreamedModuleHandler('mcp', operations, lambdaDeps);
