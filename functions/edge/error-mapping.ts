import { PlatformError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
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
  const err = mappedError(scope.deps?.logger, error, {
    requestId: scope.requestId,
    gatewayRequestId: scope.gatewayRequestId,
    method: request.method,
    route: scope.route?.def.path ?? request.path,
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

/**
 * An error as every answer states it, plain or streamed (streamed-call.ts ends its stream with it):
 * its PlatformError, and for a server error one operator line with the unexpected cause.
 */
export function mappedError(
  logger: Logger | undefined,
  error: unknown,
  at: { requestId: string; gatewayRequestId?: string | undefined; method: string; route: string },
): PlatformError {
  const err = toPlatformError(error, at.requestId);
  logServerError(logger, {
    ...at,
    status: err.status,
    code: err.code,
    ...(error instanceof PlatformError ? {} : { cause: error }),
  });
  return err;
}
