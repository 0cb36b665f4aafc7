import { InvalidCursorError } from '../ports/store.ts';
import { ERROR_CODES, invalidInput, PlatformError } from '../shared/errors.ts';
import type { ErrorEnvelope } from './envelope.ts';

/**
 * An error answer's own headers: a failed call's X-Trace-Id, and a 401's challenge (RFC 9110
 * 15.5.2: a 401 carries WWW-Authenticate): the API key as a bearer token. With it, clients such as MCP's know to send their configured key rather than start an
 * OAuth flow the platform does not offer (docs/http.md).
 */
export function errorHeaders(err: PlatformError): Record<string, string> {
  const headers: Record<string, string> =
    err.code === 'UNAUTHORIZED' ? { 'WWW-Authenticate': 'Bearer realm="agenthost"' } : {};
  // A failed call's trace (docs/traces.md): found by its id like a successful one's.
  if (err.traceId) headers['X-Trace-Id'] = err.traceId;
  return headers;
}

export function errorEnvelope(err: PlatformError, requestId: string): ErrorEnvelope {
  const { suggested_wait_time, ...details } = err.details ?? {};
  return {
    error: {
      code: err.code,
      message: err.message,
      is_retryable: ERROR_CODES[err.code].retryable,
      ...(typeof suggested_wait_time === 'number' ? { suggested_wait_time } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    },
    metadata: { request_id: requestId, ...(err.traceId ? { trace_id: err.traceId } : {}) },
  };
}

/** What an error is answered as; an unexpected one (logged with its stack in onError) is a 500. */
export function toPlatformError(error: unknown, requestId: string): PlatformError {
  if (error instanceof PlatformError) return error;
  if (error instanceof InvalidCursorError)
    return invalidInput([{ field: 'query.cursor', message: error.message }]);
  const internal = new PlatformError(
    'INTERNAL_ERROR',
    `Internal error; quote request id ${requestId} when reporting it`,
  );
  // A call that failed unexpectedly still names its trace (errors.ts markTraced).
  const traceId = (error as { traceId?: unknown } | null)?.traceId;
  if (typeof traceId === 'string') internal.traceId = traceId;
  return internal;
}
