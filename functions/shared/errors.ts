import { jsonTooDeep, MAX_JSON_DEPTH } from './json-depth.ts';
/**
 * Error codes, their HTTP statuses and retryability: the spec's "Errors" table, plus CONFLICT
 * (409), which the spec does not list but which a create of something that already exists needs,
 * METHOD_NOT_ALLOWED (405), for a known path asked with a method it does not have, and
 * SERVICE_UNAVAILABLE (503), for a run no sandbox could be started for in time, the platform's
 * ceiling or its cloud account's quota reached, and for a data store that stayed busy (conflicts
 * or throttling) through a few seconds of retries (docs/decisions.md).
 */
export const ERROR_CODES = {
  INVALID_INPUT: { status: 400, retryable: false },
  MISSING_SECRETS: { status: 400, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  INSUFFICIENT_CREDITS: { status: 402, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  DOWNLOAD_DISABLED: { status: 403, retryable: false },
  PAID_AGENT_SERVER_ONLY: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  CONFLICT: { status: 409, retryable: false },
  DOCUMENT_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_TYPE: { status: 415, retryable: false },
  UNPROCESSABLE: { status: 422, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  INTERNAL_ERROR: { status: 500, retryable: true },
  LLM_ERROR: { status: 502, retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, retryable: true },
  TIMEOUT: { status: 504, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldIssue {
  /** Dotted path of the offending field, prefixed by where it came from: body.title, query.limit. */
  field: string;
  message: string;
}

export interface ErrorDetails {
  fields?: FieldIssue[];
  /** Seconds; set on RATE_LIMITED and SERVICE_UNAVAILABLE. */
  suggested_wait_time?: number;
  [key: string]: unknown;
}

export class PlatformError extends Error {
  override name = 'PlatformError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** The trace of the call that failed with it (its envelope's metadata.trace_id). */
  traceId: string | undefined;
  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

/**
 * Notes the failed call's trace on the error that ends it: a PlatformError carries it to the error
 * envelope; any other error carries it to the INTERNAL_ERROR it becomes (error-answer.ts).
 */
export function markTraced(err: unknown, traceId: string): void {
  try {
    if (err instanceof PlatformError) err.traceId ??= traceId;
    else if (err && typeof err === 'object') Object.assign(err, { traceId });
  } catch {
    // A frozen error keeps no trace id; the error itself must go on unchanged.
  }
}

export const notFound = (what: string) => new PlatformError('NOT_FOUND', `${what} not found`);

/**
 * JSON.parse of a request body (or another client-sent JSON text, named by `field`), or 400
 * INVALID_INPUT on that field. Documents nested deeper than MAX_JSON_DEPTH are refused before they
 * are built. V8's message quotes part of the input, which may be a secret: only the position is
 * reported.
 */
export function parseJsonBody(text: string, field = 'body'): unknown {
  if (jsonTooDeep(text)) {
    throw invalidInput([{ field, message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw invalidInput([{ field, message: `is not valid JSON${at ? ` (at position ${at})` : ''}` }]);
  }
}

export function invalidInput(issues: FieldIssue[]): PlatformError {
  const summary = issues
    .slice(0, 5)
    .map((i) => `${i.field}: ${i.message}`)
    .join('; ');
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new PlatformError('INVALID_INPUT', `Invalid input: ${summary}${more}`, { fields: issues });
}

/** 413 for a request body over `limit` bytes (the local server and the handler both use it). */
export function bodyTooLarge(limit: number): PlatformError {
  return new PlatformError('DOCUMENT_TOO_LARGE', `The request body exceeds the limit of ${limit} bytes`, {
    fields: [{ field: 'body', message: `must be at most ${limit} bytes` }],
    limit_bytes: limit,
  });
}
