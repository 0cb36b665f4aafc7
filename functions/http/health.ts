import { createModuleHandler, type Operations } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'health'> = {
  health: async () => ({ status: 'ok' as const }),
};

export const handler = createModuleHandler('health', operations, lambdaDeps);
