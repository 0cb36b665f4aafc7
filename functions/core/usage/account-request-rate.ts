import type { CoreDeps } from '../../ports/core-deps.ts';
import type { ItemKey } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';

/*
 * Each account's request rate (docs/http.md, "Request rate"): request units a UTC minute, by tier.
 * A request costs 1 unit when it is admitted, and its answer 1 more per ANSWER_BYTES_PER_UNIT once
 * it is made, so what a request costs the platform (a 6 MB list page takes about 100 ms of the
 * event loop to serialize and send, a small answer well under 1 ms) is what it costs the account,
 * and a request over the minute's units is refused before any work is done for it: the answer
 * that spent the units refuses the next request, not itself (its size is known only once made).
 * Counted in the store, an atomic add on one item per account and minute, so it holds the same on
 * every deployment: one process locally, and on AWS across every Lambda instance at once (no
 * instance's own bucket would stop one key from taking the platform's throughput). Agent calls have
 * their own admission instead (daily quota and concurrent requests: functions/core/calls/quotas.ts).
 */

const WINDOW_SECONDS = 60;
/** A counter outlives its minute by this much, then expires (TTL). */
const COUNTER_GRACE_SECONDS = 120;
/** Answer bytes that cost one unit: a 6 MB list page costs about 185, a small answer nothing. */
export const ANSWER_BYTES_PER_UNIT = 32 * 1024;

/**
 * In a partition of its own, not the account's: every API function may update these counters (and
 * the address counters) whatever its table access, by an IAM condition on the partition key
 * (lib/constructs/platform-function.ts), which must not open the account's other items.
 */
const counterKey = (accountId: string, windowStart: number): ItemKey => ({
  pk: `REQUESTS#${accountId}`,
  sk: `MINUTE#${windowStart}`,
});

/**
 * Accounts this process saw past their minute's units, with the count it saw: refused again until
 * that minute ends without a store write, since the count only grows within a minute and the answer
 * is the same. So an account that floods past its rate costs its key's reads and no write (on AWS,
 * no write unit and no hot item for its counter: test/e2e/accounts-tasks-workspaces.test.ts meters
 * it), learnt once per process (a Lambda instance, from its first refusal). Checked against the
 * account's tier at each request, so an upgrade in the minute counts again at once. At most
 * SPENT_MAX accounts, the oldest forgotten first: a forgotten one costs its write again, no more.
 */
const spent = new Map<string, { windowStart: number; used: number }>();
const SPENT_MAX = 10_000;

function rememberSpent(accountId: string, windowStart: number, used: number): void {
  spent.delete(accountId);
  spent.set(accountId, { windowStart, used });
  // A Map iterates in insertion order: its first key is the account remembered longest ago.
  const oldest = spent.size > SPENT_MAX ? spent.keys().next().value : undefined;
  if (oldest !== undefined) spent.delete(oldest);
}

function windowOf(deps: CoreDeps): { start: number; reset: number; nowSeconds: number } {
  const nowSeconds = deps.clock.now().getTime() / 1000;
  const start = Math.floor(nowSeconds) - (Math.floor(nowSeconds) % WINDOW_SECONDS);
  return { start, reset: start + WINDOW_SECONDS, nowSeconds };
}

/**
 * Counts one unit for the caller's request in the current minute, and throws the 429 when the
 * minute's units were spent already. A refused request is counted too (one more attempt), until
 * this process knows the minute is spent (`spent` above): then it is refused without a write.
 */
export async function admitAccountRequest(deps: CoreDeps, auth: AuthContext): Promise<void> {
  if (deps.config.requestRate === 'off') return;
  const limit = TIER_LIMITS[auth.tier].requestUnitsPerMinute;
  const { start, reset, nowSeconds } = windowOf(deps);
  const seen = spent.get(auth.accountId);
  if (!(seen && seen.windowStart === start && seen.used > limit)) {
    const used = await deps.store.atomicAdd(counterKey(auth.accountId, start), 'units', 1, {
      ttl: reset + COUNTER_GRACE_SECONDS,
    });
    if (used <= limit) return;
    rememberSpent(auth.accountId, start, used);
  }
  const wait = Math.max(1, Math.ceil(reset - nowSeconds));
  throw new PlatformError(
    'RATE_LIMITED',
    `This account spent the ${limit} request units a minute of the ${auth.tier} tier (a request costs 1, and 1 more per ${ANSWER_BYTES_PER_UNIT / 1024} KiB of its answer); retry after ${wait} s`,
    { suggested_wait_time: wait, limit, reset, quota: 'requests' },
  );
}

/** Charges an answer's bytes to the caller's current minute (nothing for an answer under a unit). */
export async function chargeAnswerBytes(deps: CoreDeps, auth: AuthContext, bytes: number): Promise<void> {
  if (deps.config.requestRate === 'off') return;
  const units = Math.floor(bytes / ANSWER_BYTES_PER_UNIT);
  if (units === 0) return;
  const { start, reset } = windowOf(deps);
  await deps.store.atomicAdd(counterKey(auth.accountId, start), 'units', units, {
    ttl: reset + COUNTER_GRACE_SECONDS,
  });
}
