/*
 * Workspace routes: workspaces and their members.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  inviteBody,
  memberListSchema,
  memberParams,
  memberSchema,
  workspaceCreateBody,
  workspaceListSchema,
  workspaceParams,
  workspaceSchema,
} from '../../core/workspaces/workspace-schemas.ts';
import { route } from './route-def.ts';

export const workspaceRoutes = {
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
    errors: ['CONFLICT'],
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
    errors: ['CONFLICT'],
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
    errors: ['CONFLICT', 'FORBIDDEN'],
    success: { status: 204, description: 'Removed' },
  }),
} as const;
