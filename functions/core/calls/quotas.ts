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
 * Concurrent-request slot `n` of an account (held by a call, expires with its lease). A finished
 * call frees it by expiring it in place (its ttl set to the time it finished), not by deleting it:
 * an expired item is absent for every read and condition in both stores, exactly as a deleted
 * one, so versions before this one take it as they always did, while the next call here rewrites
 * the same row instead of inserting one (in SQLite, no write to the key index; docs/performance.md,
 * item 12).
 */
const concurrencySlotKey = (accountId: string, n: number): ItemKey => ({
  pk: `ACCOUNT#${accountId}`,
  sk: `LEASE#${n}`,
});

export interface Admission {
  /**
   * Releases the concurrency slot, writing `items` (the call's records) in the same transaction;
   * with `keepSlot`, writes them alone and leaves the slot to `release`. Never throws for a slot
   * that expired and was taken over meanwhile.
   */
  finish(items: Item[], ops?: TransactOp[], keepSlot?: boolean): Promise<void>;
  /** Releases the slot alone (a streamed call's, once its answer is delivered); at most once. */
  release(): Promise<void>;
}

/** Paid calls bypass the tier's daily limit but count against this abuse cap (spec "Limits"). */
export const PAID_DAILY_CAP = 100_000;

/**
 * Admits a call in one transaction: today's counter +1 under `calls < limit`, and a free
 * concurrency slot taken with a conditional create (TTL at the deadline plus a grace period, so a
 * process that dies mid-call frees it by itself). A slot someone else holds only moves the search
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
  // A sandboxed run is a call as well (spec "Limits": a call counts 1 against the daily limit), so
  // it also takes one of the day's calls, under the tier's daily limit (issue 32).
  const alsoDailyCalls: TransactOp[] =
    kind === 'sandbox'
      ? [
          {
            name: 'calls',
            update: dailyCounterKeys.calls(auth.accountId, utcDay(now)),
            spec: { add: { calls: 1 }, set: { ttl: reset + COUNTER_GRACE_SECONDS } },
            condition: cond.or(cond.attrNotExists('calls'), cond.lt('calls', limits.dailyCalls)),
          },
        ]
      : [];
  const id = randomUUID();
  const ttl = Math.ceil(deadlineMs / 1000) + LEASE_GRACE_SECONDS;
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
        ...alsoDailyCalls,
        { name: 'slot', put: { ...slotKey, lease_id: id, ttl }, condition: cond.notExists() },
      ]);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      if (err.cancelledBy('counter')) throw quotaExceeded(auth, dailyLimit, reset, now, kind);
      if (err.cancelledBy('calls')) throw quotaExceeded(auth, limits.dailyCalls, reset, now);
      continue; // that slot is held: try the next one
    }
    heldSlots.hold(auth.accountId, slot);
    let released = false;
    // The slot freed by expiring it now, if this call's lease still holds it.
    const freeSlot = (): TransactOp => {
      released = true;
      heldSlots.release(auth.accountId, slot);
      return {
        update: slotKey,
        spec: { set: { ttl: Math.floor(deps.clock.now().getTime() / 1000) }, remove: ['lease_id'] },
        condition: cond.eq('lease_id', id),
      };
    };
    const records = (items: Item[], ops: TransactOp[]) => [...items.map((item) => ({ put: item })), ...ops];
    return {
      finish: async (items, ops = [], keepSlot = false) => {
        if (keepSlot || released) {
          if (items.length + ops.length > 0) await deps.store.transactWrite(records(items, ops));
          return;
        }
        try {
          await deps.store.transactWrite([freeSlot(), ...records(items, ops)]);
        } catch (err) {
          if (!(err instanceof TransactionCanceledError)) throw err;
          // The lease expired and another call holds the slot now: write the records alone.
          if (items.length + ops.length > 0) await deps.store.transactWrite(records(items, ops));
        }
      },
      release: async () => {
        if (released) return;
        try {
          await deps.store.transactWrite([freeSlot()]);
        } catch (err) {
          // The lease expired and another call holds the slot now: nothing of this call's is left.
          if (!(err instanceof TransactionCanceledError)) throw err;
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
