import * as z from 'zod';
import { intParam } from '../../shared/query-params.ts';
import { nextOffsetSchema } from '../payloads/answer-page.ts';
import { ROLES } from './workspace-schemas.ts';

/** How long an invitation waits for its answer (docs/roles.md). */
export const INVITATION_LIFETIME_DAYS = 14;

export const inviteBody = z
  .strictObject({
    account_id: z.uuid().optional(),
    email: z.email().max(254).optional(),
    role: z.enum(ROLES).default('member'),
  })
  .refine((b) => (b.account_id === undefined) !== (b.email === undefined), {
    message: 'give exactly one of account_id and email',
    path: ['account_id'],
  });

/**
 * A pending invitation, the same for its workspace's owners and for the account it is addressed
 * to. It names its addressee only as the inviter gave it: by account id, or by email, never both,
 * so an invitation by account id never shows that account's email.
 */
export const invitationSchema = z.object({
  id: z.uuid(),
  workspace: z.object({ id: z.uuid(), name: z.string(), slug: z.string() }),
  role: z.enum(ROLES).describe('The role the invited account gets when it accepts'),
  account_id: z.uuid().nullable().describe('The invited account, when invited by account id'),
  email: z.string().nullable().describe('The invited email (lowercased), when invited by email'),
  invited_by: z.object({ account_id: z.uuid(), org: z.string().nullable() }),
  created_at: z.string(),
  expires_at: z.string(),
});

export const invitationListSchema = z.object({
  invitations: z.array(invitationSchema),
  total: z.number().int().describe('Pending invitations in all, over every page'),
  next_offset: nextOffsetSchema,
});

/** Invitation lists page like the other lists (docs/http.md "Pages"). */
export const invitationListQuery = z.strictObject({
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const invitationParams = z.strictObject({ invitation_id: z.string().min(1).max(100) });
export const workspaceInvitationParams = z.strictObject({
  workspace_id: z.string().min(1).max(100),
  invitation_id: z.string().min(1).max(100),
});

export type Invitation = z.infer<typeof invitationSchema>;
export type InvitationListQuery = z.infer<typeof invitationListQuery>;
export type InvitationList = z.infer<typeof invitationListSchema>;
