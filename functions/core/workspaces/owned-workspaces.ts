import type { Tier } from '../../ports/config.ts';
import { cond, type TransactOp } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';

/*
 * How many workspaces an account owns, its personal one included, against its tier's limit
 * (docs/limits.md, "Counts per account"). The count is `owned_workspaces` on the account's
 * item, changed in the same transaction as every membership that makes or ends an ownership
 * (creating a workspace, accepting an owner's invitation, an owner removed or leaving), under the
 * condition that it stays within the limit: two racing creates cannot both take the last one, on
 * either store.
 */

/** The account item's attribute that counts its owned workspaces. */
export const OWNED_WORKSPACES_ATTR = 'owned_workspaces';

/** The op (named 'owned') that counts one more owned workspace, within the tier's limit. */
export function takeOwnedWorkspace(accountId: string, tier: Tier): TransactOp {
  const limit = TIER_LIMITS[tier].ownedWorkspaces;
  return {
    name: 'owned',
    update: accountKeys.account(accountId),
    spec: { add: { [OWNED_WORKSPACES_ATTR]: 1 } },
    condition: cond.and(
      cond.exists(),
      cond.or(cond.attrNotExists(OWNED_WORKSPACES_ATTR), cond.lt(OWNED_WORKSPACES_ATTR, limit)),
    ),
  };
}

/** The op that counts one owned workspace fewer (an owner removed, or leaving). */
export function releaseOwnedWorkspace(accountId: string): TransactOp {
  return {
    update: accountKeys.account(accountId),
    spec: { add: { [OWNED_WORKSPACES_ATTR]: -1 } },
    condition: cond.exists(),
  };
}

/** The refusal when the 'owned' op's condition failed. */
export function ownedWorkspacesExceeded(tier: Tier): PlatformError {
  const limit = TIER_LIMITS[tier].ownedWorkspaces;
  return new PlatformError(
    'FORBIDDEN',
    `The ${tier} plan allows an account to own ${limit} workspaces at a time, its personal one included; leave one as owner (after adding another owner) first`,
    { limit, quota: 'workspaces' },
  );
}
