import { purgeDeletedBundles } from '../core/agents/bundle-purge.ts';
import { reconcileCharges } from '../core/billing/ledger.ts';
import { reconcileInterruptedRuns } from '../core/schedules/schedule-run-inflight.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

/**
 * Periodic housekeeping (every five minutes in AWS; every minute and at start-up locally):
 * refunds paid calls charged but never completed (docs/billing.md), records schedule runs that
 * were in flight when the platform died as interrupted (docs/schedules.md), and deletes the
 * bundles of agent versions purged after a soft delete.
 *
 * `afterRestart`: the local platform at start, holding its data dir's lock (data-dir-lock.ts), so
 * nothing in flight can still be running: every marker and pending charge is settled now, not
 * after its deadline and the grace. AWS never passes it: there many Lambdas run at once.
 */
export async function runHousekeeping(
  deps: Deps,
  options: { afterRestart?: boolean } = {},
): Promise<{ refunded: number; interrupted: number; purged: number }> {
  const all = options.afterRestart === true;
  const { refunded } = await reconcileCharges(deps, { all });
  const { interrupted } = await reconcileInterruptedRuns(deps, { all });
  const { purged } = await purgeDeletedBundles(deps);
  return { refunded, interrupted, purged };
}

let deps: Promise<Deps> | undefined;

export async function handler(): Promise<{ refunded: number; interrupted: number; purged: number }> {
  deps ??= createDeps(processConfig());
  return runHousekeeping(await deps);
}
