import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import { notFound } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { workspaceKeys } from '../workspaces/workspace-record.ts';
import { secretEntity, secretKeys } from './secret-record.ts';
import type { SecretRecord } from './secret-schemas.ts';

/**
 * Creates or replaces a secret (owners only). The value goes to the vault first, then the listing
 * record to the store: a failure between the two leaves at worst a value nobody lists, which the
 * next PUT of the same name overwrites, never a listed secret without a value.
 */
export async function putSecret(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  input: { name: string; value: string },
): Promise<SecretRecord & { created: boolean }> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  const now = deps.clock.now().toISOString();
  await deps.vault.putValue({ workspaceId, name: input.name }, input.value);
  const before = await deps.store.get(secretKeys.secret(workspaceId, input.name));
  const record: SecretRecord = {
    name: input.name,
    created_at: before ? secretEntity.fromItem(before).created_at : now,
    updated_at: now,
  };
  await deps.store.put(secretEntity.toItem(record, workspaceId));
  return { ...record, created: !before };
}

/** Names and timestamps only (any member); values are never returned by any endpoint. */
export async function listSecrets(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
): Promise<SecretRecord[]> {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, {
    pk: workspaceKeys.workspace(workspaceId).pk,
    sk: { beginsWith: secretKeys.prefix },
  });
  return items.map((item) => secretEntity.fromItem(item));
}

/** Deletes a secret (owners only): the listing record first, then the value. */
export async function deleteSecret(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  name: string,
): Promise<void> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  const removed = await deps.store.delete(secretKeys.secret(workspaceId, name));
  if (!removed) throw notFound('Secret');
  await deps.vault.deleteValue({ workspaceId, name });
}

/**
 * The values a run may see: exactly the names asked for (the manifest's declared secrets), from
 * the run's workspace. For the runtimes; never exposed over HTTP.
 */
export async function resolveSecretsForRun(
  deps: CoreDeps,
  workspaceId: string,
  names: string[],
): Promise<{ values: Record<string, string>; missing: string[] }> {
  const values = await deps.vault.resolve(workspaceId, names);
  return { values, missing: names.filter((n) => !(n in values)) };
}
