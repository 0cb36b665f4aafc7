import { z } from 'zod';
import {
  apiKeyCreateBody,
  apiKeyCreatedSchema,
  apiKeyIdParams,
  apiKeyListSchema,
} from '../core/api-keys/api-key-schemas.ts';
import {
  taskCreateBody,
  taskIdParams,
  taskListQuery,
  taskListSchema,
  taskSchema,
  taskUpdateBody,
  workspaceIdParams,
} from '../core/tasks/task-schemas.ts';

/**
 * The route table: the single source for the local server's dispatch, the CDK API resources
 * (one Lambda per module) and /openapi.json. Adding an endpoint is one entry here plus its
 * operation in functions/http/<module>.ts.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const MODULES = ['health', 'openapi', 'api-keys', 'tasks'] as const;
export type ResourceModule = (typeof MODULES)[number];

export interface RouteDef {
  method: HttpMethod;
  /** API Gateway style template: /tasks/{task_id}. */
  path: string;
  module: ResourceModule;
  auth: 'api-key' | 'none';
  summary: string;
  tag: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  success: { status: 200 | 201 | 204; schema?: z.ZodType; description: string };
}

const route = <const R extends RouteDef>(r: R): R => r;

export const routes = {
  health: route({
    method: 'GET',
    path: '/health',
    module: 'health',
    auth: 'none',
    summary: 'Readiness check',
    tag: 'Platform',
    success: { status: 200, schema: z.object({ status: z.literal('ok') }), description: 'Ready' },
  }),
  getOpenApi: route({
    method: 'GET',
    path: '/openapi.json',
    module: 'openapi',
    auth: 'none',
    summary: 'This API’s OpenAPI 3.1 description',
    tag: 'Platform',
    success: { status: 200, schema: z.record(z.string(), z.unknown()), description: 'OpenAPI document' },
  }),
  listApiKeys: route({
    method: 'GET',
    path: '/api-keys',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'List the account’s API keys (never the keys themselves)',
    tag: 'API keys',
    success: { status: 200, schema: apiKeyListSchema, description: 'The keys' },
  }),
  createApiKey: route({
    method: 'POST',
    path: '/api-keys',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Create an API key; the key is shown once, in this response',
    tag: 'API keys',
    body: apiKeyCreateBody,
    success: { status: 201, schema: apiKeyCreatedSchema, description: 'Created' },
  }),
  deleteApiKey: route({
    method: 'DELETE',
    path: '/api-keys/{id}',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Delete an API key; it is refused from the next request on',
    tag: 'API keys',
    params: apiKeyIdParams,
    success: { status: 204, description: 'Deleted' },
  }),
  createTask: route({
    method: 'POST',
    path: '/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Create a task (in the personal workspace unless workspace_id is given)',
    tag: 'Tasks',
    body: taskCreateBody,
    success: { status: 201, schema: taskSchema, description: 'Created' },
  }),
  listTasks: route({
    method: 'GET',
    path: '/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'List tasks of the personal workspace (or of workspace_id)',
    tag: 'Tasks',
    query: taskListQuery,
    success: { status: 200, schema: taskListSchema, description: 'A page of tasks and the total' },
  }),
  getTask: route({
    method: 'GET',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Get a task',
    tag: 'Tasks',
    params: taskIdParams,
    success: { status: 200, schema: taskSchema, description: 'The task' },
  }),
  updateTask: route({
    method: 'PATCH',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Update some of a task’s fields',
    tag: 'Tasks',
    params: taskIdParams,
    body: taskUpdateBody,
    success: { status: 200, schema: taskSchema, description: 'The updated task' },
  }),
  deleteTask: route({
    method: 'DELETE',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Delete a task',
    tag: 'Tasks',
    params: taskIdParams,
    success: { status: 204, description: 'Deleted' },
  }),
  listWorkspaceTasks: route({
    method: 'GET',
    path: '/workspaces/{workspace_id}/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'List a workspace’s tasks',
    tag: 'Tasks',
    params: workspaceIdParams,
    query: taskListQuery.omit({ workspace_id: true }),
    success: { status: 200, schema: taskListSchema, description: 'A page of tasks and the total' },
  }),
} as const;

export type Routes = typeof routes;
export type OperationId = keyof Routes;

export const routeList: [OperationId, RouteDef][] = Object.entries(routes) as [OperationId, RouteDef][];
