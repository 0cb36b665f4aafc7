/*
 * Secret routes: a workspace's secrets (names only are ever returned).
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  secretListSchema,
  secretParams,
  secretPutBody,
  secretPutResultSchema,
} from '../../core/secrets/secret-schemas.ts';
import { workspaceParams } from '../../core/workspaces/workspace-schemas.ts';
import { route } from './route-def.ts';

export const secretRoutes = {
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
