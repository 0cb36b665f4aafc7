import { setTimeout as sleep } from 'node:timers/promises';
import { StoreBusyError } from '../../ports/store.ts';
import { storeDeadline } from '../../ports/store-deadline.ts';

/**
 * DynamoDB's "not now" answers, and the retry they get. A concurrent transaction on the same item
 * cancels a TransactWriteItems with the reason `TransactionConflict` (and a single write with
 * TransactionConflictException); a table over its throughput throttles. None of them wrote
 * anything or judged a condition, so retrying is safe and callers must never read them as a
 * failed condition (a quota counter that conflicted is not used up). The SDK retries throttling
 * of a single request itself (its standard strategy, 3 attempts, keeping the request's
 * ClientRequestToken), but never a cancelled transaction or a TransactionConflictException: those
 * are retried here, and whatever throttling outlasts the SDK's attempts too: within a fixed budget
 * of a few seconds, or less when the call the operation is made for ends sooner (store-deadline.ts;
 * docs/data-model.md, "Transient failures").
 */

/**
 * Errors of a request that was refused before it was applied. Not TransactionInProgressException:
 * it says an earlier send of the same ClientRequestToken (the SDK's own retry) may still commit,
 * and a new request, with a new token, could then apply the transaction twice.
 */
const TRANSIENT_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
]);

/** Cancellation reasons of a transaction's op that say "not now" rather than "no". */
const TRANSIENT_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

export function isTransientError(err: unknown): boolean {
  return err instanceof Error && TRANSIENT_ERRORS.has(err.name);
}

/** Every op that did not pass was held up by contention or throughput (and at least one did not). */
export function onlyTransientReasons(codes: string[]): boolean {
  const failed = codes.filter((code) => code !== 'None');
  return failed.length > 0 && failed.every((code) => TRANSIENT_REASONS.has(code));
}

export interface RetryPolicy {
  /**
   * Milliseconds from an operation's first attempt after which no retry starts: the most any
   * operation waits on the store, a call's too (a call with less time left stops at its deadline;
   * one whose deadline has passed, writing its record or releasing its slot, gets the budget).
   */
  budgetMs: number;
  /** The first retry's delay ceiling; it doubles with each retry up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** [0, 1): the jitter's source (injectable so a test can pin it). */
  random: () => number;
}

/**
 * Conflicts clear within milliseconds (the other transaction commits), so the first retries come
 * soon; throttling needs longer, which the doubling gives. Three seconds bound what any request,
 * a call's too, spends waiting on the store: a streamed call has up to 300 s, and retrying that
 * long through a throttling episode would hold its concurrency slot and its Lambda, and add its
 * own retries to the throttled table, for every tenant at once. The client is told to
 * come back instead (503, Retry-After).
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  budgetMs: 3_000,
  baseDelayMs: 20,
  maxDelayMs: 500,
  random: Math.random,
};

/**
 * One operation's retries: exponential backoff with full jitter, never waiting past the policy's
 * budget, nor past the deadline of the call it is made for when that comes first.
 */
export class Backoff {
  private retries = 0;
  private readonly policy: RetryPolicy;
  private readonly until: number;

  constructor(policy: RetryPolicy, deadline: number | undefined = storeDeadline()) {
    this.policy = policy;
    const now = Date.now();
    const budget = now + policy.budgetMs;
    this.until = deadline !== undefined && deadline > now ? Math.min(deadline, budget) : budget;
  }

  /** Waits before the next attempt; false (without waiting) once the budget would be overrun. */
  async wait(): Promise<boolean> {
    const ceiling = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** this.retries++);
    const delay = this.policy.random() * ceiling;
    if (Date.now() + delay >= this.until) return false;
    await sleep(delay);
    return true;
  }

  /** Waits, or throws StoreBusyError for `err` when the budget is spent. */
  async waitOrGiveUp(err: unknown): Promise<void> {
    if (!(await this.wait())) throw new StoreBusyError(err);
  }
}

/** Sends a request, retrying transient refusals until the call's deadline or within the policy's budget. */
export async function retryTransient<T>(policy: RetryPolicy, send: () => Promise<T>): Promise<T> {
  const backoff = new Backoff(policy);
  for (;;) {
    try {
      return await send();
    } catch (err) {
      if (!isTransientError(err)) throw err;
      await backoff.waitOrGiveUp(err);
    }
  }
}
