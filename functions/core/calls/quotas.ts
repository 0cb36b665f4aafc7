import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import {
  cond,
  type Item,
  type ItemKey,
  TransactionCanceledError,
  type TransactOp,
} from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { dailyCounterKeys, nextUtcMidnight, utcDay } from '../usage/daily-usage.ts';
import { heldSlots } from './held-slots.ts';

/** Counter items outlive their day by two days (for reporting), then expire. */
const COUNTER_GRACE_SECONDS = 2 * 86_400;
/** A lease outlives its call's deadline by this much, so a crashed process frees its slot soon after. */
export const LEASE_GRACE_SECONDS = 30;

/**
 * Concurrent-request slot `n` of an account: one item per slot, kept once made. A call holds it
 * with its `lease_id` until `expires_at` (epoch seconds); finishing sets `expires_at` to 0. The
 * expiry is an attribute of its own, not the item's `ttl`, and the slot is never deleted: taking
 * and freeing it then rewrite one row in place, where a new row and its deletion each wrote the
 * table, its key index and its ttl index (docs/performance.md, item 12). A slot's item from before
 * (a `ttl`, no `expires_at`) is free once its ttl has passed, as it was.
 */
const concurrencySlotKey = (accountId: string, n: number): ItemKey => ({
  pk: `ACCOUNT#${accountId}`,
  sk: `LEASE#${n}`,
});

export interface Admission {
  /**
   * Releases the concurrency slot, writing `items` (the call's records) in the same transaction.
   * Never throws for a slot that expired and was taken over meanwhile.
   */
  finish(items: Item[], ops?: TransactOp[]): Promise<void>;
}

/** Paid calls bypass the tier's daily limit but count against this abuse cap (spec "Limits"). */
export const PAID_DAILY_CAP = 100_000;

/**
 * Admits a call in one transaction: today's counter +1 under `calls < limit`, and a free
 * concurrency slot taken with a conditional write (its lease expiring at the deadline plus a grace
 * period, so a process that dies mid-call frees it by itself). A slot someone else holds only moves the search
 * to the next slot; the counter is never incremented for a call that is not admitted. Exact under
 * races: 2Q racing calls against a quota of Q admit Q; C slots never hold more than C calls.
 */
export async function admitCall(
  deps: CoreDeps,
  auth: AuthContext,
  deadlineMs: number,
  kind: 'llm' | 'sandbox' | 'paid' = 'llm',
): Promise<Admission> {
  const limits = TIER_LIMITS[auth.tier];
  const now = deps.clock.now();
  const reset = nextUtcMidnight(now);
  // Sandbox runs have their own, smaller daily quota (spec "Limits": separate from direct-LLM calls).
  const counterKey =
    kind === 'sandbox'
      ? dailyCounterKeys.sandboxRuns(auth.accountId, utcDay(now))
      : kind === 'paid'
        ? dailyCounterKeys.paidCalls(auth.accountId, utcDay(now))
        : dailyCounterKeys.calls(auth.accountId, utcDay(now));
  const dailyLimit =
    kind === 'sandbox' ? limits.sandboxDailyCalls : kind === 'paid' ? PAID_DAILY_CAP : limits.dailyCalls;
  const id = randomUUID();
  const expiresAt = Math.ceil(deadlineMs / 1000) + LEASE_GRACE_SECONDS;
  // Free: never taken, finished (0), or expired (its call's process died, or ran past the grace).
  const slotFree = cond.or(cond.notExists(), cond.lte('expires_at', Math.floor(now.getTime() / 1000)));
  // Slots this process's calls hold are tried last (held-slots.ts).
  for (const slot of heldSlots.order(auth.accountId, limits.concurrentRequests)) {
    const slotKey = concurrencySlotKey(auth.accountId, slot);
    try {
      await deps.store.transactWrite([
        {
          name: 'counter',
          update: counterKey,
          spec: { add: { calls: 1 }, set: { ttl: reset + COUNTER_GRACE_SECONDS } },
          condition: cond.or(cond.attrNotExists('calls'), cond.lt('calls', dailyLimit)),
        },
        { name: 'slot', put: { ...slotKey, lease_id: id, expires_at: expiresAt }, condition: slotFree },
      ]);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      if (err.cancelledBy('counter')) throw quotaExceeded(auth, dailyLimit, reset, now, kind);
      continue; // that slot is held: try the next one
    }
    heldSlots.hold(auth.accountId, slot);
    return {
      finish: async (items, ops = []) => {
        heldSlots.release(auth.accountId, slot);
        try {
          await deps.store.transactWrite([
            {
              update: slotKey,
              spec: { set: { expires_at: 0 }, remove: ['lease_id'] },
              condition: cond.eq('lease_id', id),
            },
            ...items.map((item) => ({ put: item })),
            ...ops,
          ]);
        } catch (err) {
          if (!(err instanceof TransactionCanceledError)) throw err;
          // The lease expired and another call holds the slot now: write the records alone.
          if (items.length + ops.length > 0)
            await deps.store.transactWrite([...items.map((item) => ({ put: item })), ...ops]);
        }
      },
    };
  }
  throw new PlatformError(
    'RATE_LIMITED',
    `All ${limits.concurrentRequests} concurrent requests of the ${auth.tier} tier are in use; retry when one finishes`,
    { suggested_wait_time: 1, limit: limits.concurrentRequests, quota: 'concurrency' },
  );
}

function quotaExceeded(
  auth: AuthContext,
  limit: number,
  reset: number,
  now: Date,
  kind: 'llm' | 'sandbox' | 'paid' = 'llm',
): PlatformError {
  const wait = Math.max(1, Math.ceil(reset - now.getTime() / 1000));
  const what =
    kind === 'sandbox' ? 'sandbox runs' : kind === 'paid' ? 'paid-agent calls (abuse cap)' : 'calls';
  return new PlatformError(
    'RATE_LIMITED',
    `Daily quota of ${limit} ${what} for the ${auth.tier} tier is used up; it resets at ${new Date(reset * 1000).toISOString()}`,
    // Which quota refused: the response's X-RateLimit-* headers describe that one (http-handler.ts).
    { suggested_wait_time: wait, limit, reset, quota: kind === 'llm' ? 'calls' : kind },
  );
}
