import type { CoreDeps } from '../../ports/core-deps.ts';
import { ConditionFailedError, cond, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { getAccount } from '../accounts/account.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { sizedPageOf } from '../payloads/answer-page.ts';
import { type Role, requireMembership } from './authorize.ts';
import {
  type InvitationRecord,
  invitationEntity,
  invitationId,
  invitationKeys,
} from './invitation-record.ts';
import {
  INVITATION_LIFETIME_DAYS,
  type Invitation,
  type InvitationList,
  type InvitationListQuery,
} from './invitation-schemas.ts';
import { freeInvitationSlot, releaseInvitationSlot, takeInvitationSlot } from './invitation-slots.ts';
import { memberEntity, memberKeys } from './member-record.ts';
import { ownedWorkspacesExceeded, takeOwnedWorkspace } from './owned-workspaces.ts';
import { workspaceEntity, workspaceKeys } from './workspace-record.ts';
import type { Workspace } from './workspace-schemas.ts';

/*
 * Invitations (docs/roles.md): an owner's invite is a pending invitation, and only the account it
 * is addressed to makes it a membership, by accepting it. Until then the invited account is no
 * member: it sees nothing of the workspace, and the workspace's agents are not among its MCP tools.
 * An invitation shows its addressee only as the inviter gave it, so inviting an account id never
 * tells the inviter that account's email; inviting an email answers the same whether or not an
 * account has it, so an invite is no way to learn which emails have accounts.
 */

const NOT_FOUND = 'Invitation not found';
const WITHDRAWN =
  'Invitation not found: it was withdrawn, as whoever sent it is no longer an owner of the workspace';

/** Invites an account (by id) or whoever has an email to a workspace (owners only). */
export async function inviteToWorkspace(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  input: { account_id?: string | undefined; email?: string | undefined; role: Role },
): Promise<Invitation> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  const email = input.email?.trim().toLowerCase();
  const addressee = email !== undefined ? { email } : { account_id: input.account_id ?? '' };
  if (addressee.account_id !== undefined && !(await getAccount(deps, addressee.account_id))) {
    throw new PlatformError('NOT_FOUND', `No account has the id ${addressee.account_id}`);
  }
  // A member's email is in the members list already, so refusing it tells the owner nothing new.
  const accountId =
    email === undefined ? addressee.account_id : (await deps.store.get(accountKeys.email(email)))?.account_id;
  if (typeof accountId === 'string' && (await deps.store.get(memberKeys.member(workspaceId, accountId)))) {
    throw new PlatformError('CONFLICT', 'That account is already a member of the workspace');
  }
  const now = deps.clock.now();
  const id = invitationId(workspaceId, addressee);
  const expiresAt = new Date(now.getTime() + INVITATION_LIFETIME_DAYS * 86_400_000).toISOString();
  // A slot a racing invite took first sends us to another free one. Each lost round is another
  // invite's won slot, so the rounds end, at the latest when the slots are all taken (403).
  for (let round = 0; ; round++) {
    const slot = await freeInvitationSlot(deps, auth.accountId, auth.tier);
    const record: InvitationRecord = {
      id,
      workspace_id: workspaceId,
      account_id: addressee.account_id ?? null,
      email: email ?? null,
      role: input.role,
      invited_by: auth.accountId,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      slot,
    };
    try {
      // An expired invitation reads as absent, so inviting again after expiry starts a new one.
      await deps.store.transactWrite([
        { name: 'invitation', put: invitationEntity.toItem(record), condition: cond.notExists() },
        takeInvitationSlot(auth.accountId, slot, record),
      ]);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      if (err.conditionFailed('invitation')) {
        throw new PlatformError(
          'CONFLICT',
          `${email ? 'That email' : 'That account'} already has a pending invitation to this workspace`,
        );
      }
      if (err.conditionFailed('slot') && round <= TIER_LIMITS[auth.tier].pendingInvitations) continue;
      throw new PlatformError('CONFLICT', 'Invitations were being sent at the same time; try again');
    }
    const shown = await present(deps, record);
    if (!shown) throw new PlatformError('NOT_FOUND', 'Workspace not found');
    return shown;
  }
}

/** A workspace's pending invitations, oldest first, a page at a time (owners only). */
export async function listWorkspaceInvitations(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  query: InvitationListQuery,
): Promise<InvitationList> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  const items = await queryAll(deps.store, { index: 'gsi2', pk: invitationKeys.ofWorkspace(workspaceId) });
  return presentPage(
    deps,
    items.map((i) => invitationEntity.fromItem(i)),
    query,
  );
}

/** Withdraws a pending invitation of the workspace (owners only). */
export async function revokeInvitation(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<void> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  const item = await deps.store.get(invitationKeys.invitation(id));
  const invitation = item ? invitationEntity.fromItem(item) : undefined;
  if (!invitation || invitation.workspace_id !== workspaceId) {
    throw new PlatformError('NOT_FOUND', NOT_FOUND);
  }
  await deps.store.delete(invitationKeys.invitation(id));
  await releaseInvitationSlot(deps, invitation);
}

/**
 * Withdraws the pending invitations `accountId` sent to a workspace it is no owner of any more
 * (removed, or left). Accepting them is refused anyway (acceptInvitation checks the inviter); this
 * takes them out of the lists and frees the inviter's slots. Not atomic with the removal: an
 * invitation it misses stays refused at accept and expires.
 */
export async function withdrawInvitationsOf(deps: CoreDeps, workspaceId: string, accountId: string) {
  const items = await queryAll(deps.store, { index: 'gsi2', pk: invitationKeys.ofWorkspace(workspaceId) });
  const theirs = items.map((i) => invitationEntity.fromItem(i)).filter((i) => i.invited_by === accountId);
  for (const invitation of theirs) {
    await deps.store.delete(invitationKeys.invitation(invitation.id));
    await releaseInvitationSlot(deps, invitation);
  }
}

/**
 * The pending invitations addressed to the caller (to its account id, and to its email), oldest
 * first, a page at a time: anyone may invite an email, so an inbox has no bound of its own, and
 * only the page's invitations are read beside their workspaces.
 */
export async function listMyInvitations(
  deps: CoreDeps,
  auth: AuthContext,
  query: InvitationListQuery,
): Promise<InvitationList> {
  const email = (await getAccount(deps, auth.accountId))?.email;
  const partitions = [
    invitationKeys.ofAccount(auth.accountId),
    ...(email ? [invitationKeys.ofEmail(email)] : []),
  ];
  const items = (
    await Promise.all(partitions.map((pk) => queryAll(deps.store, { index: 'gsi1', pk })))
  ).flat();
  const records = items.map((i) => invitationEntity.fromItem(i));
  records.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return presentPage(deps, records, query);
}

/**
 * Accepts an invitation addressed to the caller: in one transaction the invitation is deleted (it
 * must still exist, so of two racing accepts one wins), the membership created (it must not exist),
 * the workspace's owner count raised for an owner's role, and its inviter checked to be an owner
 * still. An invitation speaks for its inviter only while the inviter may invite: one whose inviter
 * left, was removed or lost the owner role is withdrawn, so a removed owner cannot come back
 * through an invitation it sent its own second account before it went (docs/roles.md).
 */
export async function acceptInvitation(deps: CoreDeps, auth: AuthContext, id: string): Promise<Workspace> {
  const invitation = await addressedToCaller(deps, auth, id);
  const now = deps.clock.now().toISOString();
  try {
    await deps.store.transactWrite([
      { name: 'invitation', delete: invitationKeys.invitation(id), condition: cond.exists() },
      {
        name: 'member',
        put: memberEntity.toItem({
          workspace_id: invitation.workspace_id,
          account_id: auth.accountId,
          role: invitation.role,
          joined_at: now,
        }),
        condition: cond.notExists(),
      },
      {
        name: 'workspace',
        update: workspaceKeys.workspace(invitation.workspace_id),
        spec: { add: { owner_count: invitation.role === 'owner' ? 1 : 0 } },
        condition: cond.exists(),
      },
      {
        name: 'inviter',
        check: memberKeys.member(invitation.workspace_id, invitation.invited_by),
        condition: cond.eq('role', 'owner'),
      },
      ...(invitation.role === 'owner' ? [takeOwnedWorkspace(auth.accountId, auth.tier)] : []),
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    if (err.conditionFailed('invitation')) throw new PlatformError('NOT_FOUND', NOT_FOUND);
    if (err.conditionFailed('inviter')) {
      await deps.store.delete(invitationKeys.invitation(id));
      await releaseInvitationSlot(deps, invitation);
      throw new PlatformError('NOT_FOUND', WITHDRAWN);
    }
    if (err.conditionFailed('owned')) throw ownedWorkspacesExceeded(auth.tier);
    if (err.conditionFailed('member')) {
      // A member already (it accepted another invitation to the workspace): this one has no use left.
      await deps.store.delete(invitationKeys.invitation(id));
      await releaseInvitationSlot(deps, invitation);
      throw new PlatformError('CONFLICT', 'You are already a member of this workspace');
    }
    if (err.conditionFailed('workspace')) throw new PlatformError('NOT_FOUND', 'Workspace not found');
    throw new PlatformError('CONFLICT', 'The invitation changed meanwhile; try again');
  }
  await releaseInvitationSlot(deps, invitation);
  const ws = await deps.store.get(workspaceKeys.workspace(invitation.workspace_id));
  if (!ws) throw new PlatformError('NOT_FOUND', 'Workspace not found');
  const w = workspaceEntity.fromItem(ws);
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    role: invitation.role,
    personal: w.personal,
    created_at: w.created_at,
  };
}

/** Declines an invitation addressed to the caller: it is deleted, and no membership is made. */
export async function declineInvitation(deps: CoreDeps, auth: AuthContext, id: string): Promise<void> {
  const invitation = await addressedToCaller(deps, auth, id);
  try {
    await deps.store.delete(invitationKeys.invitation(id), { condition: cond.exists() });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    throw new PlatformError('NOT_FOUND', NOT_FOUND);
  }
  await releaseInvitationSlot(deps, invitation);
}

/**
 * The invitation, if it is addressed to the caller and still open. Anyone else's invitation is
 * not found, the same as one that does not exist, so ids tell an outsider nothing.
 */
async function addressedToCaller(deps: CoreDeps, auth: AuthContext, id: string): Promise<InvitationRecord> {
  const item = await deps.store.get(invitationKeys.invitation(id));
  const invitation = item ? invitationEntity.fromItem(item) : undefined;
  if (!invitation) throw new PlatformError('NOT_FOUND', NOT_FOUND);
  const mine =
    invitation.account_id === auth.accountId ||
    (invitation.email !== null && (await getAccount(deps, auth.accountId))?.email === invitation.email);
  if (!mine || isPast(invitation, deps)) throw new PlatformError('NOT_FOUND', NOT_FOUND);
  return invitation;
}

function isPast(invitation: InvitationRecord, deps: CoreDeps): boolean {
  return Date.parse(invitation.expires_at) <= deps.clock.now().getTime();
}

/**
 * A page of the open invitations among `records` (docs/http.md "Pages"): at most `limit`, bounded
 * by size like the other lists, and only the page's invitations read beside their workspace and
 * inviter (a list of 900 once took 4 s on AWS, reading every one of them).
 */
async function presentPage(
  deps: CoreDeps,
  records: InvitationRecord[],
  query: InvitationListQuery,
): Promise<InvitationList> {
  const open = records.filter((r) => !isPast(r, deps));
  const { page, next_offset } = await sizedPageOf(
    open.slice(query.offset, query.offset + query.limit),
    query.offset,
    open.length,
    (r) => present(deps, r),
  );
  return {
    invitations: page.filter((i): i is Invitation => i !== undefined),
    total: open.length,
    next_offset,
  };
}

/**
 * The invitation as the API shows it: the workspace's name and the inviter's org beside it
 * (undefined when its workspace is gone).
 */
async function present(deps: CoreDeps, r: InvitationRecord): Promise<Invitation | undefined> {
  const [wsItem, inviter] = await Promise.all([
    deps.store.get(workspaceKeys.workspace(r.workspace_id)),
    getAccount(deps, r.invited_by),
  ]);
  if (!wsItem) return undefined;
  const ws = workspaceEntity.fromItem(wsItem);
  return {
    id: r.id,
    workspace: { id: ws.id, name: ws.name, slug: ws.slug },
    role: r.role,
    account_id: r.account_id,
    email: r.email,
    invited_by: { account_id: r.invited_by, org: inviter?.org ?? null },
    created_at: r.created_at,
    expires_at: r.expires_at,
  };
}
