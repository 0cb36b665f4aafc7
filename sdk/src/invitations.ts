import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import type { paths } from './generated/openapi.ts';

/**
 * The invited account's side of workspace invitations: an owner's invite is only an invitation
 * until the account it is addressed to accepts it (docs/roles.md).
 */
export function invitationsResource(api: Client<paths>) {
  return {
    /** The pending invitations addressed to the caller (by account id or by its email). */
    list: async () => unwrap(await api.GET('/invitations')),
    /** Joins the invitation's workspace with its role; answers the workspace. */
    accept: async (invitation_id: string) =>
      unwrap(await api.POST('/invitations/{invitation_id}/accept', { params: { path: { invitation_id } } })),
    /** Declines: the invitation is deleted, no membership is made. */
    decline: async (invitation_id: string) =>
      unwrap(await api.POST('/invitations/{invitation_id}/decline', { params: { path: { invitation_id } } })),
  };
}
