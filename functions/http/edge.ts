import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

/**
 * The function behind the ANY method of every API resource, and what the local server hands a
 * request no route takes: the shared handler answers from the route table alone (405 with Allow, a
 * CORS preflight, or 404), with the rate-limit headers every response carries (docs/http.md).
 */
export const operations: Operations<'edge'> = {};

export const handler = createModuleHandler('edge', operations, lambdaDeps);
