import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { ROLES } from './workspace-schemas.ts';

/**
 * The key shapes of a pending invitation (docs/data-model.md): its own item, found by id; in GSI1
 * under its addressee (an account id, or an email for invitations by email), so the invitations
 * an account may answer are one query per way of addressing it; in GSI2 under its workspace, so
 * its owners list them in one query.
 */
export const invitationKeys = {
  invitation: (invitationId: string): ItemKey => ({ pk: `INVITE#${invitationId}`, sk: 'INVITE' }),
  /** GSI1 partition of the invitations addressed to an account by its id. */
  ofAccount: (accountId: string) => `INVITEE#ACCOUNT#${accountId}`,
  /** GSI1 partition of the invitations addressed to an email (lowercased). */
  ofEmail: (email: string) => `INVITEE#EMAIL#${email.toLowerCase()}`,
  /** GSI2 partition of a workspace's pending invitations. */
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#INVITES`,
};

/**
 * The id of the invitation of one addressee to one workspace: derived from both, so that a second
 * invite of the same addressee finds the first one's item (a conditional put, no separate guard),
 * and shaped as a UUID. Knowing it gives nothing: only the addressee accepts or declines it, and
 * only the workspace's owners list or revoke it; to anyone else it is not found.
 */
export function invitationId(
  workspaceId: string,
  addressee: { account_id?: string; email?: string },
): string {
  const who = addressee.account_id ? `account:${addressee.account_id}` : `email:${addressee.email}`;
  const h = createHash('sha256').update(`invitation\n${workspaceId}\n${who}`).digest('hex');
  // RFC 9562 version 8 (custom) with the RFC variant, so it validates as a UUID anywhere.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A pending invitation: who is invited to which workspace, with which role, by whom, until when. */
export const invitationEntity = defineEntity({
  name: 'invitation',
  keys: invitationKeys,
  schema: z.object({
    id: z.string(),
    workspace_id: z.string(),
    account_id: z.string().nullable(),
    email: z.string().nullable(),
    role: z.enum(ROLES),
    invited_by: z.string(),
    created_at: z.string(),
    expires_at: z.string(),
    /** The inviter's pending-invitation slot it holds (invitation-slots.ts); null if sent before slots. */
    slot: z.number().int().nullable().default(null),
  }),
  locate: (i) => ({
    ...invitationKeys.invitation(i.id),
    gsi1pk: i.account_id ? invitationKeys.ofAccount(i.account_id) : invitationKeys.ofEmail(i.email ?? ''),
    gsi1sk: `${i.created_at}#${i.id}`,
    gsi2pk: invitationKeys.ofWorkspace(i.workspace_id),
    gsi2sk: `${i.created_at}#${i.id}`,
    ttl: Math.floor(Date.parse(i.expires_at) / 1000),
  }),
});

export type InvitationRecord = z.output<typeof invitationEntity.schema>;
