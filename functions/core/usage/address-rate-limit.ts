import type { CoreDeps } from '../../ports/core-deps.ts';
import type { ItemKey } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { RateLimitState } from './daily-usage.ts';

/**
 * The rate limit of requests that no API key vouches for: the routes without one (health, the
 * OpenAPI document, the public directory and downloads, webhooks, checkout pages), and any request
 * whose key is missing or wrong (so guessing keys is bounded too). Counted per client address and
 * UTC minute: a daily count would let one address spend the whole day's allowance in a burst, and
 * a load balancer's health checks would use it up. The address is the one the connection came
 * from (API Gateway's sourceIp in AWS, the socket's peer locally), never a header a client can
 * write. Authenticated requests are limited by their account's daily quota instead.
 */

const WINDOW_SECONDS = 60;
/** A counter outlives its minute by this much, then expires (TTL). */
const COUNTER_GRACE_SECONDS = 120;

const addressCounterKey = (address: string, windowStart: number): ItemKey => ({
  pk: `ADDRESS#${address}`,
  sk: `RATE#${windowStart}`,
});

export interface AddressAdmission {
  state: RateLimitState;
  /** Whether this request is over the limit (it was still counted). */
  refused: boolean;
}

/**
 * Counts one request from `address` in the current minute. The count is atomic, so racing requests
 * never exceed the limit together; a refused request is counted too (it is one more attempt).
 */
export async function countAddressRequest(deps: CoreDeps, address: string): Promise<AddressAdmission> {
  const limit = deps.config.addressRateLimit;
  const nowSeconds = Math.floor(deps.clock.now().getTime() / 1000);
  const windowStart = nowSeconds - (nowSeconds % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;
  const used = await deps.store.atomicAdd(
    addressCounterKey(address || 'unknown', windowStart),
    'requests',
    1,
    {
      ttl: reset + COUNTER_GRACE_SECONDS,
    },
  );
  return {
    state: { limit, remaining: Math.max(0, limit - used), reset },
    refused: used > limit,
  };
}

/** The 429 of an address over its limit: retry when the minute turns. */
export function addressLimited(admission: AddressAdmission, now: Date): PlatformError {
  const { limit, reset } = admission.state;
  const wait = Math.max(1, Math.ceil(reset - now.getTime() / 1000));
  return new PlatformError(
    'RATE_LIMITED',
    `More than ${limit} requests a minute from this address without an API key; retry after ${wait} s`,
    { suggested_wait_time: wait, limit, reset, quota: 'address' },
  );
}
