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

/** The concurrency slot an admitted call holds: which, and under which lease. */
export interface SlotLease {
  slot: number;
  lease_id: string;
}

export interface Admission {
  /** The slot it holds (what a run's replay holds again: resumedAdmission). */
  lease: SlotLease;
  /**
   * Writes `items` (the call's records) and releases the concurrency slot: each on its own after
   * the records, or, with `ops` (a charge to settle), in one transaction with them and the ops; with
   * `keepSlot`, writes them alone and leaves the slot to `release`. Never throws for a slot that
   * expired and was taken over meanwhile.
   */
  finish(items: Item[], ops?: TransactOp[], keepSlot?: boolean): Promise<void>;
  /** Releases the slot alone (a streamed call's, once its answer is delivered); at most once. */
  release(): Promise<void>;
}

/** Paid calls bypass the tier's daily limit but count against this abuse cap (spec "Limits"). */
export const PAID_DAILY_CAP = 100_000;

/** One more call on a daily counter, refused (by `name`) at its limit; the counter lives to `reset`. */
const countOp = (name: string, c: { key: ItemKey; limit: number }, reset: number): TransactOp => ({
  name,
  update: c.key,
  spec: { add: { calls: 1 }, set: { ttl: reset + COUNTER_GRACE_SECONDS } },
  condition: cond.or(cond.attrNotExists('calls'), cond.lt('calls', c.limit)),
});

/** A count given back. */
const uncountOp = (c: { key: ItemKey }): TransactOp => ({ update: c.key, spec: { add: { calls: -1 } } });

/** A call's records put, then `ops`. */
const withRecords = (items: Item[], ops: TransactOp[]): TransactOp[] => [
  ...items.map((item) => ({ put: item })),
  ...ops,
];

/**
 * Admits a call: a free concurrency slot taken with a conditional create (TTL at the deadline plus
 * a grace period, so a process that dies mid-call frees it by itself), then today's counter +1
 * under `calls < limit` (and, for a sandboxed run, which is a call as well, the day's calls too:
 * spec "Limits"). A slot someone else holds only moves the search to the next slot; a
 * call a counter refuses gives back what it took. Exact under races: 2Q racing calls against a
 * quota of Q admit Q; C slots never hold more than C calls.
 *
 * The writes go through Store.writeEach, in order and each on its own, not as one transaction:
 * DynamoDB bills every item of a transaction twice, so admitting and finishing a prompt call cost
 * 10 write units where these cost 6 (docs/performance.md, "AWS cost"); the SQLite store still
 * makes each one commit. What the transaction added, the counter never counting a call that was not
 * admitted and a retry never applying twice, holds but for a process that dies between two of the
 * writes, or a store that fails part way or loses an answer that its retry then repeats: the call
 * is counted once more and its slot expires with the lease. The slot's own put is idempotent (a
 * retry finds this lease's id and holds).
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
  const day = utcDay(now);
  const own = dailyCounter(auth, kind, day);
  const calls = dailyCounter(auth, 'llm', day);
  const id = randomUUID();
  const ttl = Math.ceil(deadlineMs / 1000) + LEASE_GRACE_SECONDS;
  // Slots this process's calls hold are tried last (held-slots.ts).
  for (const slot of heldSlots.order(auth.accountId, limits.concurrentRequests)) {
    const held = heldLease(deps, auth.accountId, { slot, lease_id: id });
    // Given back, best effort, when the call is not admitted after all: the slot (its release is
    // conditional on this lease, so it is safe whether or not the put was applied) and what was
    // counted. One that fails leaves the lease to expire, never the caller a 500 for it.
    const giveBack = (counted: TransactOp[]) =>
      Promise.allSettled([
        deps.store.writeEach([held.freeSlot()]),
        ...counted.map((op) => deps.store.writeEach([op])),
      ]);
    let failed: string | undefined;
    try {
      failed = await deps.store.writeEach([
        // This lease's own put, retried after a lost answer, holds: not a slot someone else holds.
        {
          name: 'slot',
          put: { ...concurrencySlotKey(auth.accountId, slot), lease_id: id, ttl },
          condition: cond.or(cond.notExists(), cond.eq('lease_id', id)),
        },
        countOp('counter', own, reset),
        ...(kind === 'sandbox' ? [countOp('calls', calls, reset)] : []),
      ]);
    } catch (err) {
      // The store failed part way (past its retries): whether the counters were applied is not
      // known, so they are left as they are (the call counted at most once more); the slot is freed.
      await giveBack([]);
      throw err;
    }
    if (failed === 'slot') continue; // that slot is held: try the next one
    heldSlots.hold(auth.accountId, slot);
    if (failed === 'counter') {
      await giveBack([]);
      throw quotaExceeded(auth, own.limit, reset, now, kind);
    }
    if (failed === 'calls') {
      await giveBack([uncountOp(own)]);
      throw quotaExceeded(auth, calls.limit, reset, now);
    }
    return held.admission;
  }
  // Every slot is held. A used-up day says so first: retrying in a second would not help.
  await refuseUsedUpDay(deps, auth, kind, now, reset);
  throw new PlatformError(
    'RATE_LIMITED',
    `All ${limits.concurrentRequests} concurrent requests of the ${auth.tier} tier are in use; retry when one finishes`,
    { suggested_wait_time: 1, limit: limits.concurrentRequests, quota: 'concurrency' },
  );
}

/**
 * The admission of a run carried on by another process (edge/run-resume.ts): the slot its
 * first process took, under the same lease, which expires with the run's deadline as it did.
 */
export function resumedAdmission(deps: CoreDeps, auth: AuthContext, lease: SlotLease): Admission {
  heldSlots.hold(auth.accountId, lease.slot);
  return heldLease(deps, auth.accountId, lease).admission;
}

/** A lease's slot: freeing it (once), and the admission that writes the call's records beside it. */
function heldLease(
  deps: CoreDeps,
  accountId: string,
  lease: SlotLease,
): { admission: Admission; freeSlot: () => TransactOp } {
  const slotKey = concurrencySlotKey(accountId, lease.slot);
  let releasing = false;
  // The slot freed by expiring it now, if this call's lease still holds it.
  const freeSlot = (): TransactOp => {
    releasing = true;
    heldSlots.release(accountId, lease.slot);
    return {
      name: 'release',
      update: slotKey,
      spec: { set: { ttl: Math.floor(deps.clock.now().getTime() / 1000) }, remove: ['lease_id'] },
      condition: cond.eq('lease_id', lease.lease_id),
    };
  };
  // A slot whose lease expired and that another call took since is not this call's to free: the
  // release's condition fails, and that is all (writeEach answers 'release' and wrote nothing).
  const release = async () => {
    if (releasing) return;
    await deps.store.writeEach([freeSlot()]);
  };
  const finish: Admission['finish'] = async (items, ops = [], keepSlot = false) => {
    if (ops.length === 0) {
      // Nothing to settle: the records, then the slot's release, each on its own.
      const writes = [...withRecords(items, []), ...(keepSlot || releasing ? [] : [freeSlot()])];
      if (writes.length > 0) await deps.store.writeEach(writes);
      return;
    }
    // A settlement (a charge) is written in one transaction with the records: never one
    // without the other. The slot goes with them.
    if (keepSlot || releasing) {
      await deps.store.transactWrite(withRecords(items, ops));
      return;
    }
    try {
      await deps.store.transactWrite([freeSlot(), ...withRecords(items, ops)]);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      // The lease expired and another call holds the slot now: write the records alone.
      await deps.store.transactWrite(withRecords(items, ops));
    }
  };
  return { freeSlot, admission: { lease, finish, release } };
}

/** The day's counter a call of `kind` counts against, and its limit. */
function dailyCounter(
  auth: AuthContext,
  kind: 'llm' | 'sandbox' | 'paid',
  day: string,
): { key: ItemKey; limit: number } {
  const limits = TIER_LIMITS[auth.tier];
  if (kind === 'sandbox')
    return { key: dailyCounterKeys.sandboxRuns(auth.accountId, day), limit: limits.sandboxDailyCalls };
  if (kind === 'paid') return { key: dailyCounterKeys.paidCalls(auth.accountId, day), limit: PAID_DAILY_CAP };
  return { key: dailyCounterKeys.calls(auth.accountId, day), limit: limits.dailyCalls };
}

/** Throws the quota's refusal when the day's counters of `kind` are used up (reads them). */
async function refuseUsedUpDay(
  deps: CoreDeps,
  auth: AuthContext,
  kind: 'llm' | 'sandbox' | 'paid',
  now: Date,
  reset: number,
): Promise<void> {
  const day = utcDay(now);
  const own = dailyCounter(auth, kind, day);
  const usedUp = async (c: { key: ItemKey; limit: number }) =>
    Number((await deps.store.get(c.key))?.calls ?? 0) >= c.limit;
  if (await usedUp(own)) throw quotaExceeded(auth, own.limit, reset, now, kind);
  const calls = dailyCounter(auth, 'llm', day);
  if (kind === 'sandbox' && (await usedUp(calls))) throw quotaExceeded(auth, calls.limit, reset, now);
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
    // Which quota refused: the response's X-RateLimit-* headers describe that one (edge/response-headers.ts).
    { suggested_wait_time: wait, limit, reset, quota: kind === 'llm' ? 'calls' : kind },
  );
}
