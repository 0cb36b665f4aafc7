import { purgeDeletedBundles } from '../core/agents/bundle-purge.ts';
import { reconcileCharges } from '../core/billing/ledger.ts';
import { sweepDuePayloads } from '../core/payloads/payload-sweep.ts';
import { reconcileInterruptedRuns } from '../core/schedules/schedule-run-inflight.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

/**
 * Periodic housekeeping (every five minutes in AWS; every minute and at start-up locally):
 * refunds paid calls charged but never completed (docs/billing.md), records schedule runs that
 * were in flight when the platform died as interrupted (docs/schedules.md), deletes the
 * bundles of agent versions purged after a soft delete, deletes stored large outputs whose
 * record or download link has expired (core/payloads/payload-sweep.ts), and deletes the run
 * objects (secret values among them) that ECS sandbox sessions which never closed left.
 *
 * `afterRestart`: the local platform at start, holding its data dir's lock (data-dir-lock.ts), so
 * nothing in flight can still be running: every marker and pending charge is settled now, not
 * after its deadline and the grace, but the charges of the runs it carries on (`carriedOn`, their
 * request ids: edge/run-resume.ts). AWS never passes it: there many Lambdas run at once.
 */
export async function runHousekeeping(
  deps: Deps,
  options: { afterRestart?: boolean; carriedOn?: ReadonlySet<string> } = {},
): Promise<HousekeepingResult> {
  const all = options.afterRestart === true;
  const { refunded } = await reconcileCharges(deps, { all, carriedOn: options.carriedOn });
  const { interrupted } = await reconcileInterruptedRuns(deps, { all });
  const { purged } = await purgeDeletedBundles(deps);
  const { swept } = await sweepDuePayloads(deps);
  const runObjects = await sweepRunObjects(deps);
  return { refunded, interrupted, purged, swept, runObjects };
}

interface HousekeepingResult {
  refunded: number;
  interrupted: number;
  purged: number;
  swept: number;
  /** Run objects (ECS sandbox manifests, claims, results) of sessions that never closed, deleted. */
  runObjects: number;
}

/**
 * The run objects sessions that never closed left (the ECS sandbox's: adapters/aws/run-object-sweep.ts),
 * deleted once older than any session may live. A failure is logged and left for the next run (and the lifecycle rule).
 */
async function sweepRunObjects(deps: Deps): Promise<number> {
  if (!deps.sandbox.sweep) return 0;
  try {
    return await deps.sandbox.sweep(deps.clock.now());
  } catch (err) {
    deps.logger.warn('run object sweep failed', { error: String(err) });
    return 0;
  }
}

let deps: Promise<Deps> | undefined;

export async function handler(): Promise<HousekeepingResult> {
  deps ??= createDeps(processConfig());
  return runHousekeeping(await deps);
}
