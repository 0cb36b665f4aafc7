import { z } from 'zod';
import {
  apiKeyCreateBody,
  apiKeyCreatedSchema,
  apiKeyIdParams,
  apiKeyListSchema,
} from '../core/api-keys/api-key-schemas.ts';
import {
  secretListSchema,
  secretParams,
  secretPutBody,
  secretPutResultSchema,
} from '../core/secrets/secret-schemas.ts';
import {
  taskCreateBody,
  taskIdParams,
  taskListQuery,
  taskListSchema,
  taskSchema,
  taskUpdateBody,
  workspaceIdParams,
} from '../core/tasks/task-schemas.ts';
import {
  inviteBody,
  memberListSchema,
  memberParams,
  memberSchema,
  workspaceCreateBody,
  workspaceListSchema,
  workspaceParams,
  workspaceSchema,
} from '../core/workspaces/workspace-schemas.ts';

/**
 * The route table: the single source for the local server's dispatch, the CDK API resources
 * (one Lambda per module) and /openapi.json. Adding an endpoint is one entry here plus its
 * operation in functions/http/<module>.ts.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const MODULES = ['health', 'openapi', 'api-keys', 'tasks', 'workspaces', 'secrets'] as const;
export type ResourceModule = (typeof MODULES)[number];

export interface RouteDef {
  method: HttpMethod;
  /** API Gateway style template: /tasks/{task_id}. */
  path: string;
  module: ResourceModule;
  auth: 'api-key' | 'none';
  /**
   * For workspace-scoped routes: the role the caller needs in the workspace (checked in the core
   * by requireMembership; documented and tested from here). Not a member: 404. Member where owner
   * is needed: 403.
   */
  workspaceRole?: 'member' | 'owner';
  summary: string;
  tag: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** A raw (non-JSON) body, such as a code bundle: delivered as bytes with its Content-Type. */
  binaryBody?: { maxBytes: number; contentTypes: string[] };
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
    workspaceRole: 'member',
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
    workspaceRole: 'member',
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
    workspaceRole: 'member',
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
    workspaceRole: 'member',
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
    workspaceRole: 'member',
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
    workspaceRole: 'member',
    query: taskListQuery.omit({ workspace_id: true }),
    success: { status: 200, schema: taskListSchema, description: 'A page of tasks and the total' },
  }),
  listWorkspaces: route({
    method: 'GET',
    path: '/workspaces',
    module: 'workspaces',
    auth: 'api-key',
    summary: 'List the caller’s workspaces with the caller’s role in each',
    tag: 'Workspaces',
    success: { status: 200, schema: workspaceListSchema, description: 'The workspaces' },
  }),
  createWorkspace: route({
    method: 'POST',
    path: '/workspaces',
    module: 'workspaces',
    auth: 'api-key',
    summary: 'Create a workspace; the caller becomes its owner',
    tag: 'Workspaces',
    body: workspaceCreateBody,
    success: { status: 201, schema: workspaceSchema, description: 'Created' },
  }),
  listMembers: route({
    method: 'GET',
    path: '/workspaces/{workspace_id}/members',
    module: 'workspaces',
    auth: 'api-key',
    workspaceRole: 'member',
    summary: 'List a workspace’s members',
    tag: 'Workspaces',
    params: workspaceParams,
    success: { status: 200, schema: memberListSchema, description: 'The members' },
  }),
  inviteMember: route({
    method: 'POST',
    path: '/workspaces/{workspace_id}/invite',
    module: 'workspaces',
    auth: 'api-key',
    workspaceRole: 'owner',
    summary: 'Add an existing account (by account_id or email) to a workspace',
    tag: 'Workspaces',
    params: workspaceParams,
    body: inviteBody,
    success: { status: 201, schema: memberSchema, description: 'Added' },
  }),
  removeMember: route({
    method: 'DELETE',
    path: '/workspaces/{workspace_id}/members/{account_id}',
    module: 'workspaces',
    auth: 'api-key',
    workspaceRole: 'member',
    summary: 'Remove a member (owners), or leave (any member, own account id); the last owner stays',
    tag: 'Workspaces',
    params: memberParams,
    success: { status: 204, description: 'Removed' },
  }),
  listSecrets: route({
    method: 'GET',
    path: '/workspaces/{workspace_id}/secrets',
    module: 'secrets',
    auth: 'api-key',
    workspaceRole: 'member',
    summary: 'List a workspace’s secret names (values are never returned)',
    tag: 'Secrets',
    params: workspaceParams,
    success: { status: 200, schema: secretListSchema, description: 'Secret names and timestamps' },
  }),
  putSecret: route({
    method: 'PUT',
    path: '/workspaces/{workspace_id}/secrets',
    module: 'secrets',
    auth: 'api-key',
    workspaceRole: 'owner',
    summary: 'Create or replace a secret',
    tag: 'Secrets',
    params: workspaceParams,
    body: secretPutBody,
    success: { status: 200, schema: secretPutResultSchema, description: 'Stored (the value is not echoed)' },
  }),
  deleteSecret: route({
    method: 'DELETE',
    path: '/workspaces/{workspace_id}/secrets/{name}',
    module: 'secrets',
    auth: 'api-key',
    workspaceRole: 'owner',
    summary: 'Delete a secret',
    tag: 'Secrets',
    params: secretParams,
    success: { status: 204, description: 'Deleted' },
  }),
} as const;

export type Routes = typeof routes;
export type OperationId = keyof Routes;

export const routeList: [OperationId, RouteDef][] = Object.entries(routes) as [OperationId, RouteDef][];
