import {
  createWorkspace,
  inviteMember,
  listMembers,
  listWorkspaces,
  removeMember,
} from '../core/workspaces/workspaces.ts';
import { createModuleHandler, type Operations } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'workspaces'> = {
  listWorkspaces: async ({ deps, auth }) => ({ workspaces: await listWorkspaces(deps, auth) }),
  createWorkspace: ({ deps, auth, body }) => createWorkspace(deps, auth, body),
  listMembers: async ({ deps, auth, params }) => ({
    members: await listMembers(deps, auth, params.workspace_id),
  }),
  inviteMember: ({ deps, auth, params, body }) => inviteMember(deps, auth, params.workspace_id, body),
  removeMember: async ({ deps, auth, params }) => {
    await removeMember(deps, auth, params.workspace_id, params.account_id);
    return undefined;
  },
};

export const handler = createModuleHandler('workspaces', operations, lambdaDeps);
