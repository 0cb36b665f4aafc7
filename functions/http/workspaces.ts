import {
  acceptInvitation,
  declineInvitation,
  inviteToWorkspace,
  listMyInvitations,
  listWorkspaceInvitations,
  revokeInvitation,
} from '../core/workspaces/invitations.ts';
import { createWorkspace, listMembers, listWorkspaces, removeMember } from '../core/workspaces/workspaces.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'workspaces'> = {
  listWorkspaces: async ({ deps, auth }) => ({ workspaces: await listWorkspaces(deps, auth) }),
  createWorkspace: ({ deps, auth, body }) => createWorkspace(deps, auth, body),
  listMembers: async ({ deps, auth, params }) => ({
    members: await listMembers(deps, auth, params.workspace_id),
  }),
  inviteMember: ({ deps, auth, params, body }) => inviteToWorkspace(deps, auth, params.workspace_id, body),
  listWorkspaceInvitations: ({ deps, auth, params, query }) =>
    listWorkspaceInvitations(deps, auth, params.workspace_id, query),
  revokeInvitation: async ({ deps, auth, params }) => {
    await revokeInvitation(deps, auth, params.workspace_id, params.invitation_id);
    return undefined;
  },
  listInvitations: ({ deps, auth, query }) => listMyInvitations(deps, auth, query),
  acceptInvitation: ({ deps, auth, params }) => acceptInvitation(deps, auth, params.invitation_id),
  declineInvitation: async ({ deps, auth, params }) => {
    await declineInvitation(deps, auth, params.invitation_id);
    return undefined;
  },
  removeMember: async ({ deps, auth, params }) => {
    await removeMember(deps, auth, params.workspace_id, params.account_id);
    return undefined;
  },
};

export const handler = createModuleHandler('workspaces', operations, lambdaDeps);
