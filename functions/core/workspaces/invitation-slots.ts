import type { Tier } from '../../ports/config.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { ConditionFailedError, cond, type ItemKey, queryAll, type TransactOp } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import { invitationKeys } from './invitation-record.ts';

/*
 * The pending invitations an account has sent, against its tier's limit (docs/limits.md,
 * "Counts per account"). Each pending invitation holds one of its inviter's numbered slots,
 * an item created with the invitation in one transaction under the condition that it does not
 * exist: two racing invites cannot take the same slot, so the limit holds on both stores without a
 * counter. A slot expires with its invitation (the same TTL), so an invitation nobody answered
 * frees its slot by itself, which a counter could not tell; an answered or withdrawn invitation
 * frees it at once (releaseInvitationSlot), and one whose release was lost (a process stopped in
 * between) is reclaimed when the slots are full and its invitation is found gone.
 */

const SLOT_PREFIX = 'INVITE_SLOT#';

export const invitationSlotKeys = {
  /** Slot `n` of an account's pending invitations, in its partition. */
  slot: (accountId: string, n: number): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `${SLOT_PREFIX}${String(n).padStart(4, '0')}`,
  }),
};

/**
 * A free slot of the inviter's, or the 403 when its tier's pending invitations are all out. A slot
 * found free may be taken by a racing invite before ours is written: the put's condition catches
 * that, and the caller asks again.
 */
export async function freeInvitationSlot(deps: CoreDeps, accountId: string, tier: Tier): Promise<number> {
  const limit = TIER_LIMITS[tier].pendingInvitations;
  let held = await heldSlots(deps, accountId);
  if (held.size >= limit) {
    await reclaimAnswered(deps, accountId);
    held = await heldSlots(deps, accountId);
  }
  // A free slot at random, so that invites racing from one account seldom pick the same one.
  const free: number[] = [];
  for (let n = 0; n < limit; n++) if (!held.has(n)) free.push(n);
  if (free.length > 0) return free[Math.floor(Math.random() * free.length)] ?? 0;
  throw new PlatformError(
    'FORBIDDEN',
    `The ${tier} plan allows ${limit} pending invitations at a time; revoke one, or wait until one is answered or expires`,
    { limit, quota: 'invitations' },
  );
}

/** The op (named 'slot') that takes slot `n` for an invitation, until it expires. */
export function takeInvitationSlot(
  accountId: string,
  n: number,
  invitation: { id: string; workspace_id: string; expires_at: string },
): TransactOp {
  return {
    name: 'slot',
    put: {
      ...invitationSlotKeys.slot(accountId, n),
      invitation_id: invitation.id,
      workspace_id: invitation.workspace_id,
      ttl: Math.floor(Date.parse(invitation.expires_at) / 1000),
    },
    condition: cond.notExists(),
  };
}

/** Frees an answered or withdrawn invitation's slot, unless another invitation holds it by now. */
export async function releaseInvitationSlot(
  deps: CoreDeps,
  invitation: { id: string; invited_by: string; slot: number | null },
): Promise<void> {
  if (invitation.slot === null) return; // sent before invitations held slots
  try {
    await deps.store.delete(invitationSlotKeys.slot(invitation.invited_by, invitation.slot), {
      condition: cond.eq('invitation_id', invitation.id),
    });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

async function heldSlots(deps: CoreDeps, accountId: string): Promise<Set<number>> {
  const items = await slotItems(deps, accountId);
  return new Set(items.map((i) => Number(i.sk.slice(SLOT_PREFIX.length))));
}

function slotItems(deps: CoreDeps, accountId: string) {
  return queryAll(deps.store, { pk: `ACCOUNT#${accountId}`, sk: { beginsWith: SLOT_PREFIX } });
}

/** Frees the slots whose invitation is gone (answered, revoked or withdrawn, its release lost). */
async function reclaimAnswered(deps: CoreDeps, accountId: string): Promise<void> {
  const items = await slotItems(deps, accountId);
  await Promise.all(
    items.map(async (slot) => {
      const id = String(slot.invitation_id);
      if (await deps.store.get(invitationKeys.invitation(id))) return;
      try {
        await deps.store.delete({ pk: slot.pk, sk: slot.sk }, { condition: cond.eq('invitation_id', id) });
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
      }
    }),
  );
}
