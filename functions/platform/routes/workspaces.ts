/*
 * Workspace routes: workspaces and their members.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  invitationListQuery,
  invitationListSchema,
  invitationParams,
  invitationSchema,
  inviteBody,
  workspaceInvitationParams,
} from '../../core/workspaces/invitation-schemas.ts';
import {
  memberListSchema,
  memberParams,
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
    description:
      'The workspaces the caller is a member of (ones it created, ones it joined by accepting an invitation), each with the caller’s role (docs/roles.md).',
    tag: 'Workspaces',
    success: { status: 200, schema: workspaceListSchema, description: 'The workspaces' },
  }),
  createWorkspace: route({
    method: 'POST',
    path: '/workspaces',
    module: 'workspaces',
    auth: 'api-key',
    summary: 'Create a workspace; the caller becomes its owner',
    description:
      'Makes a workspace owned by the caller; its slug (the org in agent paths) is given or derived from the name, and 409 CONFLICT when taken; 403 FORBIDDEN past the workspaces the caller’s tier may own (docs/limits.md, "Counts per account").',
    tag: 'Workspaces',
    body: workspaceCreateBody,
    errors: ['CONFLICT', 'FORBIDDEN'],
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
    summary:
      'Invite an account (by account_id) or an email to a workspace: a pending invitation, a membership only once the invited account accepts it',
    tag: 'Workspaces',
    params: workspaceParams,
    body: inviteBody,
    errors: ['CONFLICT', 'FORBIDDEN'],
    success: { status: 201, schema: invitationSchema, description: 'The pending invitation' },
  }),
  listWorkspaceInvitations: route({
    method: 'GET',
    path: '/workspaces/{workspace_id}/invitations',
    module: 'workspaces',
    auth: 'api-key',
    workspaceRole: 'owner',
    summary: 'List a workspace’s pending invitations, oldest first (paged)',
    tag: 'Workspaces',
    params: workspaceParams,
    query: invitationListQuery,
    success: {
      status: 200,
      schema: invitationListSchema,
      description: 'A page of the pending invitations and their total',
    },
  }),
  revokeInvitation: route({
    method: 'DELETE',
    path: '/workspaces/{workspace_id}/invitations/{invitation_id}',
    module: 'workspaces',
    auth: 'api-key',
    workspaceRole: 'owner',
    summary: 'Withdraw a pending invitation of the workspace',
    tag: 'Workspaces',
    params: workspaceInvitationParams,
    success: { status: 204, description: 'Withdrawn' },
  }),
  listInvitations: route({
    method: 'GET',
    path: '/invitations',
    module: 'workspaces',
    auth: 'api-key',
    summary:
      'List the pending invitations addressed to the caller (by account id or by its email), oldest first (paged)',
    description:
      'The invitations to workspaces addressed to the caller’s account id or to its email, not yet accepted, declined or expired, paged by count and size (docs/roles.md, "Invitations").',
    tag: 'Workspaces',
    query: invitationListQuery,
    success: {
      status: 200,
      schema: invitationListSchema,
      description: 'A page of the caller’s pending invitations and their total',
    },
  }),
  acceptInvitation: route({
    method: 'POST',
    path: '/invitations/{invitation_id}/accept',
    module: 'workspaces',
    auth: 'api-key',
    summary: 'Accept an invitation addressed to the caller: the caller becomes a member with its role',
    description:
      'Joins the invitation’s workspace with the role it names; only the account it is addressed to may (404 for any other). 409 CONFLICT when already a member.',
    tag: 'Workspaces',
    params: invitationParams,
    errors: ['CONFLICT', 'FORBIDDEN'],
    success: {
      status: 200,
      schema: workspaceSchema,
      description: 'The workspace joined, with the caller’s role',
    },
  }),
  declineInvitation: route({
    method: 'POST',
    path: '/invitations/{invitation_id}/decline',
    module: 'workspaces',
    auth: 'api-key',
    summary: 'Decline an invitation addressed to the caller: it is deleted, no membership is made',
    description:
      'Deletes the invitation addressed to the caller without joining; 404 for an invitation addressed to another account.',
    tag: 'Workspaces',
    params: invitationParams,
    success: { status: 204, description: 'Declined' },
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
