import { randomBytes } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { SecretRef } from '../../ports/secret-vault.ts';

/*
 * An account's webhook signing secret (docs/runs.md, "Told when it ends"): the key of the HMAC that
 * signs its runs' completion webhooks. Unlike an API key it cannot be kept as a hash, since the
 * platform signs with it, so it is kept in the vault as workspace secrets are (encrypted, never
 * answered), in a slot of the account's own that no workspace and no agent's required_secrets can
 * name. It is shown once, in the answer that made it; making another replaces it.
 */

/** Its recognisable prefix, as Stripe's endpoint secrets have, for secret scanners and the log redaction. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * Its vault slot. Workspace ids are UUIDs, so `account-<id>` is never a workspace's, and the name is
 * not an environment variable's (lower case, a hyphen), so no run can be given it.
 */
function secretRef(accountId: string): SecretRef {
  return { workspaceId: `account-${accountId}`, name: 'run-webhook-signing-secret' };
}

/** Makes the account a new signing secret, replacing the last: answered once, by the caller. */
export async function rotateWebhookSecret(
  deps: CoreDeps,
  accountId: string,
): Promise<{ secret: string; created_at: string }> {
  const secret = `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
  await deps.vault.putValue(secretRef(accountId), secret);
  return { secret, created_at: deps.clock.now().toISOString() };
}

/** The account's signing secret, undefined until it made one. Signing alone reads it. */
export async function readWebhookSecret(deps: CoreDeps, accountId: string): Promise<string | undefined> {
  const ref = secretRef(accountId);
  return (await deps.vault.resolve(ref.workspaceId, [ref.name]))[ref.name];
}
