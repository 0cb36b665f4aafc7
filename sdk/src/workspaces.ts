import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import type { paths } from './generated/openapi.ts';

type Body<P extends keyof paths, M extends 'post' | 'put'> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** Workspaces, their members and the owners' side of invitations (docs/roles.md). */
export function workspacesResource(api: Client<paths>) {
  return {
    list: async () => unwrap(await api.GET('/workspaces')),
    create: async (body: Body<'/workspaces', 'post'>) => unwrap(await api.POST('/workspaces', { body })),
    members: async (workspace_id: string) =>
      unwrap(await api.GET('/workspaces/{workspace_id}/members', { params: { path: { workspace_id } } })),
    /** Invites an account or an email: a pending invitation, a member once it is accepted. */
    invite: async (workspace_id: string, body: Body<'/workspaces/{workspace_id}/invite', 'post'>) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/invite', { params: { path: { workspace_id } }, body }),
      ),
    /** The workspace's pending invitations (owners). */
    invitations: async (workspace_id: string) =>
      unwrap(await api.GET('/workspaces/{workspace_id}/invitations', { params: { path: { workspace_id } } })),
    /** Withdraws a pending invitation (owners). */
    revokeInvitation: async (workspace_id: string, invitation_id: string) =>
      unwrap(
        await api.DELETE('/workspaces/{workspace_id}/invitations/{invitation_id}', {
          params: { path: { workspace_id, invitation_id } },
        }),
      ),
    /** Removes a member (owners), or leaves (any member, with their own account id). */
    removeMember: async (workspace_id: string, account_id: string) =>
      unwrap(
        await api.DELETE('/workspaces/{workspace_id}/members/{account_id}', {
          params: { path: { workspace_id, account_id } },
        }),
      ),
  };
}

/** A workspace's secrets: names only come back, never values. */
export function secretsResource(api: Client<paths>) {
  return {
    list: async (workspace_id: string) =>
      unwrap(await api.GET('/workspaces/{workspace_id}/secrets', { params: { path: { workspace_id } } })),
    put: async (workspace_id: string, body: Body<'/workspaces/{workspace_id}/secrets', 'put'>) =>
      unwrap(
        await api.PUT('/workspaces/{workspace_id}/secrets', { params: { path: { workspace_id } }, body }),
      ),
    delete: async (workspace_id: string, name: string) =>
      unwrap(
        await api.DELETE('/workspaces/{workspace_id}/secrets/{name}', {
          params: { path: { workspace_id, name } },
        }),
      ),
  };
}
