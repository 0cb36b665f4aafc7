import { PlatformError } from '../shared/errors.ts';
import { admitAddress } from './address-admission.ts';
import { tryAuthenticate } from './authentication.ts';
import { preflightHeaders } from './cors.ts';
import type { RequestScope } from './edge-context.ts';
import { lazyResponse } from './lazy-response.ts';

/*
 * A request no route takes (API Gateway sends every other method of every path of the API to the
 * edge function: docs/http.md). A path with routes answers OPTIONS as a CORS preflight and other
 * methods with 405 and Allow; any other path is 404. The caller's key, if it is good, still decides
 * whose rate limit the answer shows; without one the request counts against its address.
 */
export async function unrouted(
  scope: RequestScope,
  request: {
    method: string;
    path: string;
    authorization: string | undefined;
    /** A preflight's Access-Control-Request-Headers. */
    requestedHeaders: string | undefined;
  },
  /** The methods of the path's template, when some route has the path. */
  methods: string[] | undefined,
): Promise<Response> {
  scope.auth = await tryAuthenticate(scope.deps, request.authorization);
  if (!scope.auth) await admitAddress(scope);
  if (!methods) throw new PlatformError('NOT_FOUND', `No route for ${request.method} ${request.path}`);
  const allow = [...methods, 'OPTIONS'];
  scope.allow = allow;
  if (request.method === 'OPTIONS') {
    return lazyResponse(null, 204, {
      Allow: allow.join(', '),
      ...preflightHeaders(scope.deps.config.corsOrigins, scope.origin, allow, request.requestedHeaders),
    });
  }
  throw new PlatformError(
    'METHOD_NOT_ALLOWED',
    `${request.method} is not supported on ${request.path}; it supports ${allow.join(', ')}`,
    { allow },
  );
}
