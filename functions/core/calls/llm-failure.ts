/**
 * A model provider's failure as the caller sees it and as the agent's owners see it. The caller gets
 * 502 LLM_ERROR with a fixed message for the kind of failure (and, for an error status, its class),
 * and details naming the provider, its status and its own error type. The provider's words go to the
 * agent's log only: they can quote the prompt (a server-only template, the caller's input) in
 * fragments that no cleaning finds (docs/calls.md, "Provider errors").
 */
import type { LlmError } from '../../ports/llm-gateway.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { CallLogLine } from './call-log-lines.ts';

/** The class of a provider's error status, as the caller's message names it. */
export function statusClass(status: number): string {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'authentication';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500) return 'server_error';
  if (status === 413) return 'request_too_large';
  return 'invalid_request';
}

function callerMessage(err: LlmError): string {
  const who = `The ${err.provider} provider`;
  const cls = err.status !== undefined && err.status >= 400 ? ` (${statusClass(err.status)})` : '';
  switch (err.kind) {
    case 'http_status':
      return `${who} answered an error${cls}`;
    case 'unreachable':
      return `${who} could not be reached`;
    case 'malformed_answer':
      return `${who} gave an answer the platform could not read`;
    case 'stream_error':
      return `${who} failed in the middle of its answer${cls}`;
    default:
      return `${who} request failed`;
  }
}

/**
 * The caller's LLM_ERROR for `err`, and the line the agent's log gets: the provider's words,
 * passed through `redact` (the run's secret values, for a managed loop). The words may echo the
 * call's prompt and input, so they are the caller's content: the line's outline (what the agent's
 * owners read of a stranger's call, call-log-lines.ts) names the provider, status and type alone.
 */
export function providerFailure(
  err: LlmError,
  redact: (text: string) => string = (text) => text,
): { error: PlatformError; log: CallLogLine } {
  const details: Record<string, unknown> = { provider: err.provider };
  if (err.providerErrorType) details.provider_error_type = err.providerErrorType;
  if (err.status !== undefined) details.upstream_status = err.status;
  const said = [err.status !== undefined ? `HTTP ${err.status}` : err.kind, err.providerErrorType]
    .filter(Boolean)
    .join(', ');
  const outline = `provider error (${err.provider}, ${said})`;
  return {
    error: new PlatformError('LLM_ERROR', callerMessage(err), details),
    log: {
      level: 'error',
      message: `${outline}${err.providerText ? `: ${redact(err.providerText)}` : ''}`,
      outline,
    },
  };
}
