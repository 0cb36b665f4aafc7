import { createModuleHandler } from '../platform/edge/module-handler.ts';
import type { Operations } from '../platform/edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'health'> = {
  health: async () => ({ status: 'ok' as const }),
};

export const handler = createModuleHandler('health', operations, lambdaDeps);
