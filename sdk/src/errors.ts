import type { components } from './generated/openapi.ts';

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorCode = ErrorEnvelope['error']['code'];

/** An error answered by the platform: its envelope (error.code, message, is_retryable …) and status. */
export class AgentHostError extends Error {
  override name = 'AgentHostError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly isRetryable: boolean;
  /** Seconds, on RATE_LIMITED. */
  readonly suggestedWaitTime: number | undefined;
  readonly details: ErrorEnvelope['error']['details'];
  readonly requestId: string | undefined;
  /** A failed call's trace (docs/traces.md): absent when the request never reached an agent. */
  readonly traceId: string | undefined;

  constructor(status: number, envelope: ErrorEnvelope) {
    super(envelope.error.message);
    this.status = status;
    this.code = envelope.error.code;
    this.isRetryable = envelope.error.is_retryable;
    this.suggestedWaitTime = envelope.error.suggested_wait_time;
    this.details = envelope.error.details;
    this.requestId = envelope.metadata?.request_id;
    this.traceId = envelope.metadata?.trace_id;
  }
}

/**
 * Each error code's HTTP status (spec "Errors"): what a streamed call's `error` event would have
 * been answered with had the call not streamed.
 */
export const STATUS_OF: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  MISSING_SECRETS: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CREDITS: 402,
  FORBIDDEN: 403,
  DOWNLOAD_DISABLED: 403,
  PAID_AGENT_SERVER_ONLY: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  DOCUMENT_TOO_LARGE: 413,
  UNSUPPORTED_TYPE: 415,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  LLM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
};

/** Whether a body is the platform's error envelope (a proxy in between may answer something else). */
export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/**
 * The body of an openapi-fetch answer, or an AgentHostError for an error answer. A non-envelope
 * error (a proxy's page) becomes INTERNAL_ERROR with its status, so callers handle one error type.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  const envelope: ErrorEnvelope = isErrorEnvelope(result.error)
    ? result.error
    : {
        error: {
          code: 'INTERNAL_ERROR',
          message: `HTTP ${result.response.status} without an error envelope`,
          is_retryable: result.response.status >= 500,
        },
        metadata: { request_id: result.response.headers.get('x-request-id') ?? '' },
      };
  throw new AgentHostError(result.response.status, envelope);
}
