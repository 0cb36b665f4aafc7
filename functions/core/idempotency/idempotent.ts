import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { Clock } from '../../ports/clock.ts';
import { type AttrValue, ConditionFailedError, cond, type ItemKey, type Store } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { parseStored } from '../entity.ts';

/**
 * Idempotency over the Store port: the first attempt under a key runs, and a repeat within the
 * window answers that attempt's outcome without running anything (docs/data-model.md, the webhook
 * idempotency key).
 *
 * The record, at the caller's key, goes through three states:
 * - `running`: claimed by a conditional create (an expired record counts as absent, so the key is
 *   free again once its window has passed), with `run_id` (the attempt's id, handed to the work),
 *   `lease_until` (epoch ms: how long a repeat waits for it) and `ttl` (the window's end);
 * - `done`: the work returned; `run` holds its outcome as the codec encodes it;
 * - `failed`: the work threw; a repeat is told at once rather than after the lease.
 * The field names are the webhook trigger's, which stored these records first, so records already
 * in a table read the same.
 *
 * Where AWS Lambda Powertools' idempotency utility differs (INPROGRESS, COMPLETED, EXPIRED): it
 * answers a repeat of an attempt in progress with an error at once, where a repeat here waits for
 * the first outcome up to the lease (a webhook sender's retry gets the run, not a refusal); it
 * deletes the record of an attempt that threw, so a retry runs again, where here a failure is
 * remembered, because the work may have had effects before it threw (a run started, its credits
 * spent); and it lets a retry take over an attempt whose in-progress expiry passed, where here the
 * key stays refused until its window ends, because the first attempt may yet be running somewhere.
 */

export type IdempotencyState = 'running' | 'done' | 'failed';

/** What idempotent() needs of the dependencies: the store, and the clock leases are read on. */
export interface IdempotencyDeps {
  store: Store;
  clock: Clock;
}

export interface IdempotencyOptions {
  /** Where the record sits. */
  key: ItemKey;
  /** How long the first outcome answers repeats, from the first attempt's start (the record's ttl). */
  windowSeconds: number;
  /** How long a repeat waits for a first attempt still running: longer than the work can take. */
  leaseMs: number;
  /** Waits between looks at a running first attempt; setTimeout unless a test moves a fake clock. */
  sleep?: (ms: number) => Promise<void>;
}

/** How an outcome is stored in the record's `run` and read back, typed both ways. */
export interface OutcomeCodec<T> {
  encode(outcome: T): AttrValue;
  /** The stored outcome read back; one that does not parse throws MalformedItemError (entity.ts). */
  decode(stored: unknown, where: ItemKey): T;
}

export interface IdempotentResult<T> {
  outcome: T;
  /** True for a repeat answered with the first attempt's outcome: nothing ran. */
  repeated: boolean;
}

/** The record as stored; its placement (pk, sk, ttl) is stripped by the parse. */
const idempotencyRecordSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('running'), run_id: z.string(), lease_until: z.number() }),
  // `run` is checked by the caller's codec, which knows its type.
  z.object({ state: z.literal('done'), run: z.unknown() }),
  z.object({ state: z.literal('failed') }),
]);

/** The first look at a running first attempt comes after this; each wait doubles, up to the cap. */
const FIRST_WAIT_MS = 20;
const MAX_WAIT_MS = 500;

const timerSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `work` once per key within the window: the first attempt claims the key, runs, and stores
 * its outcome; a repeat answers that outcome (`repeated` true), waiting for it while the first
 * attempt runs, up to its lease. A repeat whose first attempt failed, or outlived its lease (its
 * process died), is refused with 409 CONFLICT; the work's own error reaches only the first caller.
 */
export async function idempotent<T>(
  deps: IdempotencyDeps,
  options: IdempotencyOptions,
  work: (attemptId: string) => Promise<T>,
  codec: OutcomeCodec<T>,
): Promise<IdempotentResult<T>> {
  const attemptId = randomUUID();
  if (!(await claim(deps, options, attemptId))) {
    return { outcome: await awaitFirstOutcome(deps, options, codec), repeated: true };
  }
  let outcome: T;
  try {
    outcome = await work(attemptId);
  } catch (err) {
    // The work's error is what its caller needs; failing to record the failure only makes a
    // repeat wait for the lease.
    await settle(deps.store, options.key, attemptId, { state: 'failed' }).catch(() => undefined);
    throw err;
  }
  await settle(deps.store, options.key, attemptId, { state: 'done', run: codec.encode(outcome) });
  return { outcome, repeated: false };
}

/** Creates the key's record for this attempt; false when a live record holds the key. */
async function claim(
  deps: IdempotencyDeps,
  options: IdempotencyOptions,
  attemptId: string,
): Promise<boolean> {
  const now = deps.clock.now().getTime();
  try {
    await deps.store.put(
      {
        ...options.key,
        run_id: attemptId,
        state: 'running' satisfies IdempotencyState,
        lease_until: now + options.leaseMs,
        ttl: Math.floor(now / 1000) + options.windowSeconds,
      },
      { condition: cond.notExists() },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/**
 * Records how this attempt ended, only while the record is still this attempt's: an update of a
 * missing item would create one, and a record whose window ended during the work is gone (or is a
 * later attempt's by now), so it is left as it is.
 */
async function settle(
  store: Store,
  key: ItemKey,
  attemptId: string,
  set: { state: IdempotencyState; run?: AttrValue },
): Promise<void> {
  try {
    await store.update(key, { set }, { condition: cond.eq('run_id', attemptId) });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/** Reads the key's record until the first attempt is done (with backoff), up to its lease. */
async function awaitFirstOutcome<T>(
  deps: IdempotencyDeps,
  options: IdempotencyOptions,
  codec: OutcomeCodec<T>,
): Promise<T> {
  const sleep = options.sleep ?? timerSleep;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    const item = await deps.store.get(options.key);
    const record = item && parseStored('idempotency record', idempotencyRecordSchema, item, options.key);
    if (record?.state === 'done') return codec.decode(record.run, options.key);
    if (!record || record.state === 'failed' || deps.clock.now().getTime() > record.lease_until) {
      throw new PlatformError(
        'CONFLICT',
        'The first request with this idempotency-key did not finish; retry with a new key',
      );
    }
    await sleep(wait);
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}
