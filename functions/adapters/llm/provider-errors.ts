/**
 * What the AI SDK throws when a provider fails, as the port's errors: an abort, or an LlmError that
 * keeps apart what a caller may see (the kind of failure, the HTTP status, the vendor's error type)
 * and the vendor's own words, which only the agent's logs get. The words can quote the request: a
 * vendor that refuses a prompt may cite a piece of it, and removing the exact prompt from them would
 * miss every fragment, so a server-only template would reach its callers.
 */
import { APICallError } from 'ai';
import {
  LlmAbortedError,
  LlmError,
  type LlmFailureKind,
  type LlmProviderId,
} from '../../ports/llm-gateway.ts';

/** Longest provider message kept for the agent's logs. */
const MAX_PROVIDER_TEXT = 1_000;
/** A response body longer than this is not parsed for its error type (a vendor's error is small). */
const MAX_ERROR_BODY = 64 * 1024;
/** The shape of a vendor's error type: an identifier (`rate_limit_error`, `RESOURCE_EXHAUSTED`). */
const ERROR_TYPE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Key-shaped tokens: vendor prefixes, or any long unbroken run of key characters. */
const KEY_LIKE = /\b(?:sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|[A-Za-z0-9_-]{32,})/g;

export function unwrapRetry(error: unknown): unknown {
  if (error instanceof Error && error.name === 'AI_RetryError' && 'lastError' in error) {
    return (error as { lastError: unknown }).lastError;
  }
  return error;
}

export function isAbortLike(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
  }
  return false;
}

/**
 * The port's error for what a model call threw. `apiKey` is removed from the provider's text (a
 * vendor refusing a key may quote it), with anything shaped like a key.
 */
export function providerError(
  request: { provider: LlmProviderId; signal: AbortSignal },
  error: unknown,
  apiKey: string | undefined,
): LlmError | LlmAbortedError {
  if (error instanceof LlmError || error instanceof LlmAbortedError) return error;
  const { provider } = request;
  const cause = unwrapRetry(error);
  if (request.signal.aborted || isAbortLike(cause)) {
    return new LlmAbortedError(`The ${provider} request was aborted`);
  }
  const text = (words: string) => providerText(words, apiKey);
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    const kind: LlmFailureKind =
      status === undefined ? 'unreachable' : status >= 400 ? 'http_status' : 'malformed_answer';
    const body = cause.data ?? parsedBody(cause.responseBody);
    // The SDK's message is the vendor's when it read the error body (`data`); a body it could not
    // read (Ollama's `{"error": "…"}`, a proxy's page) is the vendor's words itself.
    const words = cause.data !== undefined ? cause.message : (plainError(body) ?? cause.responseBody);
    return new LlmError(provider, kind, {
      status: kind === 'http_status' ? status : undefined,
      providerErrorType: errorType(body),
      providerText: text(words || cause.message),
    });
  }
  const streamed = streamError(cause);
  if (streamed) {
    return new LlmError(provider, 'stream_error', {
      status: streamed.statusCode,
      providerErrorType: identifier(streamed.type) ?? identifier(streamed.code) ?? errorType(streamed.data),
      providerText: text(streamed.message),
    });
  }
  // The SDK's own errors about an answer it could not read (AI_TypeValidationError,
  // AI_JSONParseError…) quote the answer; other errors are the request's.
  if (cause instanceof Error) {
    const readFailure = /^AI_(TypeValidation|JSONParse|InvalidResponseData|NoContentGenerated)/.test(
      cause.name,
    );
    return new LlmError(provider, readFailure ? 'malformed_answer' : 'other', {
      providerText: text(`${cause.name}: ${cause.message}`),
    });
  }
  return new LlmError(provider, 'other', { providerText: text(String(cause)) });
}

/** The provider's words for the agent's logs: one line, shortened, without keys. */
function providerText(words: string, apiKey: string | undefined): string {
  let text = words.replace(/\s+/g, ' ').trim();
  if (apiKey && apiKey.length >= 4) text = text.split(apiKey).join('[redacted]');
  text = text.replace(KEY_LIKE, '[redacted]');
  return text.length > MAX_PROVIDER_TEXT ? `${text.slice(0, MAX_PROVIDER_TEXT)}…` : text;
}

/**
 * A provider's error event in a stream, as the SDK's providers hand it on (their
 * createProviderStreamError: `{ message, type?, code?, statusCode?, data }`).
 */
function streamError(
  value: unknown,
): { message: string; type?: unknown; code?: unknown; statusCode?: number; data?: unknown } | undefined {
  if (value === null || typeof value !== 'object' || value instanceof Error) return undefined;
  const o = value as Record<string, unknown>;
  if (typeof o.message !== 'string') return undefined;
  return {
    message: o.message,
    type: o.type,
    code: o.code,
    statusCode: typeof o.statusCode === 'number' ? o.statusCode : undefined,
    data: o.data,
  };
}

function parsedBody(body: string | undefined): unknown {
  if (!body || body.length > MAX_ERROR_BODY) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The vendor's error type in its error body: Anthropic `{type:"error", error:{type}}`, OpenAI
 * `{error:{type, code}}`, Gemini `{error:{code: 429, status}}` (Ollama's `{error:"…"}` has none).
 */
function errorType(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  const inner = o.error !== null && typeof o.error === 'object' ? (o.error as Record<string, unknown>) : {};
  return identifier(inner.type) ?? identifier(inner.code) ?? identifier(inner.status);
}

/** The message of an error body that is only a message, as Ollama's `{"error": "…"}`. */
function plainError(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const error = (body as Record<string, unknown>).error;
  return typeof error === 'string' ? error : undefined;
}

/** A value shaped like an error type, or nothing: anything else may be the vendor's prose. */
function identifier(value: unknown): string | undefined {
  return typeof value === 'string' && value !== 'error' && ERROR_TYPE.test(value) ? value : undefined;
}
