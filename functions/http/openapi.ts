import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { buildOpenApi } from '../platform/openapi.ts';
import { createModuleHandler } from './module-handler.ts';

let cached: Record<string, unknown> | undefined;

export const operations: Operations<'openapi'> = {
  getOpenApi: async ({ deps }) => {
    cached ??= buildOpenApi({ serverUrl: deps.config.publicUrl });
    return cached;
  },
};

export const handler = createModuleHandler('openapi', operations, lambdaDeps);
