import type { CoreDeps } from '../../ports/core-deps.ts';
import { type ItemKey, SHARED } from '../../ports/store.ts';
import { isoDay } from '../../shared/iso-time.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';

/** The key shapes of an account's daily counters, per UTC day (YYYY-MM-DD), in its partition. */
export const dailyCounterKeys = {
  /** Daily call counter. */
  calls: (accountId: string, day: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `USAGE#DAY#${day}`,
  }),
  /** Daily sandbox-run counter (code runtime and managed loop), counted apart from LLM calls. */
  sandboxRuns: (accountId: string, day: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `USAGE#SANDBOX#${day}`,
  }),
  /** Daily paid-call counter (the abuse cap of paid calls, quotas.ts). */
  paidCalls: (accountId: string, day: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `USAGE#PAID#${day}`,
  }),
};

/** The UTC day an instant falls in, as YYYY-MM-DD: the daily quota's period. */
export function utcDay(at: Date): string {
  return isoDay(at);
}

/** Unix seconds of the next UTC midnight after `at`: when the daily quota resets. */
export function nextUtcMidnight(at: Date): number {
  // A UTC day is 86,400 s in JavaScript's time (no leap seconds): the next multiple of it.
  return (Math.floor(at.getTime() / 86_400_000) + 1) * 86_400;
}

/** Counter items outlive their day by two days (for reporting), then expire. */
const COUNTER_GRACE_SECONDS = 2 * 86_400;

export async function readDailyCalls(deps: CoreDeps, accountId: string): Promise<number> {
  const item = await deps.store.get(dailyCounterKeys.calls(accountId, utcDay(deps.clock.now())), SHARED);
  return typeof item?.calls === 'number' ? item.calls : 0;
}

/** Counts calls against today's quota atomically; returns the count after this increment. */
export async function incrementDailyCalls(deps: CoreDeps, accountId: string, by = 1): Promise<number> {
  const now = deps.clock.now();
  return deps.store.atomicAdd(dailyCounterKeys.calls(accountId, utcDay(now)), 'calls', by, {
    ttl: nextUtcMidnight(now) + COUNTER_GRACE_SECONDS,
  });
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  reset: number;
}

export async function rateLimitState(deps: CoreDeps, auth: AuthContext): Promise<RateLimitState> {
  const limit = TIER_LIMITS[auth.tier].dailyCalls;
  const used = await readDailyCalls(deps, auth.accountId);
  return { limit, remaining: Math.max(0, limit - used), reset: nextUtcMidnight(deps.clock.now()) };
}

/** Today's sandbox runs against the tier's sandbox quota. */
export async function sandboxQuotaState(
  deps: CoreDeps,
  auth: AuthContext,
): Promise<{ limit: number; used: number; reset: number }> {
  const now = deps.clock.now();
  const item = await deps.store.get(dailyCounterKeys.sandboxRuns(auth.accountId, utcDay(now)));
  return {
    limit: TIER_LIMITS[auth.tier].sandboxDailyCalls,
    used: typeof item?.calls === 'number' ? item.calls : 0,
    reset: nextUtcMidnight(now),
  };
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': String(state.reset),
  };
}
