import { callAgent } from '../core/calls/gateway.ts';
import { createModuleHandler } from '../platform/edge/module-handler.ts';
import type { Operations } from '../platform/edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { Reply } from '../platform/operation-replies.ts';

export const operations: Operations<'calls'> = {
  callAgent: async ({ deps, auth, params, body, requestId, header, waitUntil }) => {
    const result = await callAgent(deps, auth, {
      ...params,
      body: body.source,
      contentType: body.contentType,
      headers: header,
      requestId,
      waitUntil,
    });
    return new Reply(result.body as never, result.headers);
  },
};

export const handler = createModuleHandler('calls', operations, lambdaDeps);
