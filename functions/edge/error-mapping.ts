import { PlatformError } from '../shared/errors.ts';
import { logServerError } from '../shared/server-error-log.ts';
import type { RequestScope } from './edge-context.ts';
import { errorEnvelope, errorHeaders, toPlatformError } from './error-answer.ts';
import { lazyResponse } from './lazy-response.ts';
import { refusingQuota, responseHeaders } from './response-headers.ts';

/*
 * The one place an error becomes an answer: the spec's envelope and status (spec "Errors"), with
 * the headers of every answer, Retry-After on a 429 or 503 that suggests a wait, Allow on a 405 and the
 * bearer challenge on a 401. An unexpected error is a 500 whose message names the request id and
 * nothing else, logged with its cause.
 */

export async function errorAnswer(
  scope: Pick<
    RequestScope,
    'requestId' | 'gatewayRequestId' | 'origin' | 'auth' | 'addressAdmission' | 'allow' | 'route'
  > & {
    deps?: RequestScope['deps'];
  },
  error: unknown,
  request: { method: string; path: string },
): Promise<Response> {
  const err = toPlatformError(error, scope.requestId);
  logServerError(scope.deps?.logger, {
    requestId: scope.requestId,
    gatewayRequestId: scope.gatewayRequestId,
    method: request.method,
    route: scope.route?.def.path ?? request.path,
    status: err.status,
    code: err.code,
    ...(error instanceof PlatformError ? {} : { cause: error }),
  });
  const headers = await responseHeaders(scope, refusingQuota(err));
  if (
    (err.code === 'RATE_LIMITED' || err.code === 'SERVICE_UNAVAILABLE') &&
    typeof err.details?.suggested_wait_time === 'number'
  ) {
    headers['Retry-After'] = String(err.details.suggested_wait_time);
  }
  if (err.code === 'METHOD_NOT_ALLOWED' && scope.allow) headers.Allow = scope.allow.join(', ');
  return lazyResponse(JSON.stringify(errorEnvelope(err, scope.requestId)), err.status, {
    ...headers,
    ...errorHeaders(err),
  });
}
