import { type RateLimitState, rateLimitHeaders, rateLimitState } from '../core/usage/daily-usage.ts';
import type { PlatformError } from '../shared/errors.ts';
import { corsHeaders } from './cors.ts';
import type { RequestScope } from './edge-context.ts';

/*
 * The headers every answer of the API carries: content type, no caching, the request id, CORS for
 * the request's origin and the X-RateLimit-* headers (spec "Limits": on every response). Building
 * them writes nothing: whoever counted the request (authentication.ts, address-admission.ts,
 * unrouted.ts) left the count in the scope, and this only reads it.
 */

export async function responseHeaders(
  scope: Pick<RequestScope, 'requestId' | 'origin' | 'auth' | 'addressAdmission'> & {
    deps?: RequestScope['deps'];
  },
  quota?: RateLimitState,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Request-Id': scope.requestId,
  };
  const deps = scope.deps;
  if (!deps) return headers;
  Object.assign(headers, corsHeaders(deps.config.corsOrigins, scope.origin));
  try {
    const state =
      quota ?? (scope.auth ? await rateLimitState(deps, scope.auth) : scope.addressAdmission?.state);
    if (state) Object.assign(headers, rateLimitHeaders(state));
  } catch (err) {
    // A failed counter read must not turn a good response into an error.
    deps.logger.warn('rate-limit state unavailable', { request_id: scope.requestId, error: String(err) });
  }
  return headers;
}

/** The quota a 429 came from when it is not the daily call quota the headers show by default. */
export function refusingQuota(err: PlatformError): RateLimitState | undefined {
  const d = err.details;
  if (err.code !== 'RATE_LIMITED' || !d || !['sandbox', 'paid', 'requests'].includes(String(d.quota)))
    return undefined;
  if (typeof d.limit !== 'number' || typeof d.reset !== 'number') return undefined;
  return { limit: d.limit, remaining: 0, reset: d.reset };
}
