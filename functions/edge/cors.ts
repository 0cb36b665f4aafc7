/**
 * Cross-origin requests from browsers (docs/http.md). The operator lists the origins allowed to call
 * the API (PLATFORM_CORS_ORIGINS; none by default, so no page on another site can use a visitor's
 * key). A request from a listed origin gets Access-Control-Allow-Origin and may read the headers
 * the platform's clients need; a preflight (OPTIONS) gets the path's methods and the headers the
 * browser asked to send. Others get no CORS headers, and the browser keeps the answer from the page.
 */

/**
 * Response headers a page may read: the request id, the rate limit, a deprecated version's, and a
 * 401's challenge (which browser MCP clients read to learn how to authenticate).
 */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'WWW-Authenticate',
  // A call's trace (docs/traces.md).
  'X-Trace-Id',
].join(', ');

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

function allowed(origins: readonly string[], origin: string | undefined): origin is string {
  return origin !== undefined && (origins.includes('*') || origins.includes(origin));
}

/** The CORS headers of an ordinary response to a request from `origin`. */
export function corsHeaders(origins: readonly string[], origin: string | undefined): Record<string, string> {
  if (origins.length === 0) return {};
  // The answer depends on the Origin header whenever origins are configured: caches must key on it.
  if (!allowed(origins, origin)) return { Vary: 'Origin' };
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin',
  };
}

/** The CORS headers of a preflight for a path that has `methods`. */
export function preflightHeaders(
  origins: readonly string[],
  origin: string | undefined,
  methods: readonly string[],
  requestedHeaders: string | undefined,
): Record<string, string> {
  if (!allowed(origins, origin)) return corsHeaders(origins, origin);
  return {
    ...corsHeaders(origins, origin),
    'Access-Control-Allow-Methods': methods.join(', '),
    // What the page asked to send: its own headers are its business; the key still has to be valid.
    ...(requestedHeaders ? { 'Access-Control-Allow-Headers': requestedHeaders } : {}),
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
    Vary: 'Origin, Access-Control-Request-Headers',
  };
}
