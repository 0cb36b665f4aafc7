import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'health'> = {
  health: async () => ({ status: 'ok' as const }),
};

export const handler = createModuleHandler('health', operations, lambdaDeps);
