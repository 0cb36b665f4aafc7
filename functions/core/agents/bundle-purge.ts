import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import { agentKeys } from './agent-keys.ts';

/** GSI2 partition of bundles waiting for their soft-deleted version's purge. */
export const BUNDLES_TO_PURGE = 'BUNDLES#PURGE';

export const bundlePurgeKey = (agentId: string) => ({ pk: `BUNDLEPURGE#${agentId}`, sk: 'PURGE' });

/** The marker a soft delete writes: remove this bundle once the version's record is purged. */
export function bundlePurgeItem(agentId: string, bundleKey: string, purgeAtSeconds: number) {
  return {
    ...bundlePurgeKey(agentId),
    agent_id: agentId,
    bundle_key: bundleKey,
    purge_at: purgeAtSeconds,
    gsi2pk: BUNDLES_TO_PURGE,
    gsi2sk: `${String(purgeAtSeconds).padStart(12, '0')}#${agentId}`,
  };
}

/**
 * Housekeeping: deletes the code bundles of versions whose retention after a soft delete has
 * passed (their records are gone, or still marked deleted), then the markers. Version keys are
 * never reused (the version counter only grows), so a purged bundle's key cannot belong to a
 * live version. In AWS the bucket keeps a deleted object as a noncurrent version for 30 days.
 */
export async function purgeDeletedBundles(deps: CoreDeps): Promise<{ purged: number }> {
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  const due = await queryAll(deps.store, {
    index: 'gsi2',
    pk: BUNDLES_TO_PURGE,
    sk: { lt: `${String(now).padStart(12, '0')}#~` },
  });
  let purged = 0;
  for (const marker of due) {
    const agentId = String(marker.agent_id);
    const version = await deps.store.get(agentKeys.version(agentId));
    if (!version || version.deleted_at) {
      await deps.bundles.delete(String(marker.bundle_key));
      purged++;
    }
    await deps.store.delete(bundlePurgeKey(agentId));
  }
  if (purged > 0) deps.logger.info('bundles of purged versions deleted', { purged });
  return { purged };
}
