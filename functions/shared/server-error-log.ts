import { type Logger, redact } from './logger.ts';

/** A 5xx the platform answered, as its operator's log line describes it. */
export interface ServerErrorAnswer {
  /** The id the client got in X-Request-Id and the error envelope. */
  requestId: string;
  /** API Gateway's own id of the request, on AWS: what its access log line is found by. */
  gatewayRequestId?: string | undefined;
  method: string;
  /**
   * The route's template (`/webhooks/{schedule_id}/{webhook_secret}`), never the path sent, which
   * may hold a secret.
   */
  route: string | undefined;
  status: number;
  code: string | undefined;
  /** An unexpected error behind a 500: its name, message and stack go on the same line. */
  cause?: unknown;
}

export const SERVER_ERROR_MESSAGE = 'server error answered';

/**
 * One operator line for each 5xx the platform answers, at a level the default (`info`) shows: a
 * 504 after a call's deadline or a 502 from a provider used to leave no line at all, and an
 * unexpected error left one without the status or the method. No header, query or body goes in it.
 * A 500 is an error; a 502, 503 or 504 (something upstream failed or was slow) a warning.
 */
export function logServerError(logger: Logger | undefined, answer: ServerErrorAnswer): void {
  if (answer.status < 500) return;
  const { cause } = answer;
  const fields = {
    request_id: answer.requestId,
    ...(answer.gatewayRequestId ? { gateway_request_id: answer.gatewayRequestId } : {}),
    method: answer.method,
    route: answer.route,
    status: answer.status,
    code: answer.code,
    ...(cause === undefined
      ? {}
      : {
          error: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause),
          stack: cause instanceof Error ? cause.stack : undefined,
        }),
  };
  const level = answer.status === 500 ? 'error' : 'warn';
  if (logger) logger[level](SERVER_ERROR_MESSAGE, fields);
  // No dependencies (they failed to build): the line still goes out.
  else process.stderr.write(`${redact(JSON.stringify({ level, msg: SERVER_ERROR_MESSAGE, ...fields }))}\n`);
}
