import { reconcileCharges } from '../core/billing/ledger.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

let deps: Promise<Deps> | undefined;

/**
 * Every few minutes (an EventBridge schedule in AWS; a timer in the local platform): refunds the
 * charges whose calls never completed (docs/billing.md, reconciliation).
 */
export async function handler(): Promise<{ refunded: number }> {
  deps ??= createDeps(processConfig());
  return reconcileCharges(await deps);
}
