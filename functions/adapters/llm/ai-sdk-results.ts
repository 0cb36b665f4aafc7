/*
 * Between the AI SDK's answers and the LlmGateway port: finish reasons, token usage, structured
 * answers, a prompt call's options, and provider errors made safe to show (ai-sdk-gateway.ts).
 */
import type { FinishReason, JSONSchema7, LanguageModelUsage } from 'ai';
import type { LlmFinishReason, LlmRequest, LlmResponseFacts, LlmResult } from '../../ports/llm-gateway.ts';
import { jsonTooDeep } from '../../shared/json-depth.ts';
import type { ModelV4 } from './provider-models.ts';

/** Longest provider-supplied reason kept in an LlmError message. */
const MAX_REASON_LENGTH = 200;

export function mapFinishReason(reason: FinishReason | string): LlmFinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'content-filter':
    case 'tool-calls':
    case 'error':
    case 'other':
      return reason;
    case 'interrupted':
      return 'other';
    default:
      return 'unknown';
  }
}

export function mapUsage(usage: LanguageModelUsage | undefined): LlmResult['usage'] {
  return {
    inputTokens: usage?.inputTokens ?? undefined,
    outputTokens: usage?.outputTokens ?? undefined,
    totalTokens: usage?.totalTokens ?? undefined,
  };
}

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

/** Key-shaped tokens: vendor prefixes, or any long unbroken run of key characters. */
const KEY_LIKE = /\b(?:sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|[A-Za-z0-9_-]{32,})/g;

/** A provider's reason, shortened, on one line, with keys, the prompt and the system text removed. */
export function sanitize(message: string, secrets: readonly (string | undefined)[]): string {
  let text = message.replace(/\s+/g, ' ').trim();
  for (const secret of secrets) {
    if (secret && secret.length >= 4) text = text.split(secret).join('[redacted]');
  }
  text = text.replace(KEY_LIKE, '[redacted]');
  if (text.length > MAX_REASON_LENGTH) text = `${text.slice(0, MAX_REASON_LENGTH)}…`;
  return text;
}

/**
 * A structured answer's JSON value, or undefined when it is not JSON (or nested deeper than the
 * platform parses). Not checked against the schema: the platform validates.
 */
function parseAnswer(text: string): unknown {
  if (jsonTooDeep(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Stop condition: the last step holds a successful result of the submit tool (not a tool error). */
export function submitted(toolName: string) {
  return ({ steps }: { steps: Array<{ toolResults: Array<{ toolName: string }> }> }) =>
    steps.at(-1)?.toolResults.some((r) => r.toolName === toolName) ?? false;
}

/** The doGenerate options of a prompt call (the same for a live call and a captured one). */
export function callOptions(request: LlmRequest): Parameters<ModelV4['doGenerate']>[0] {
  return {
    prompt: [
      ...(request.system != null ? [{ role: 'system' as const, content: request.system }] : []),
      { role: 'user', content: [{ type: 'text', text: request.prompt }] },
    ],
    maxOutputTokens: request.maxOutputTokens,
    abortSignal: request.signal,
    ...(request.outputSchema
      ? { responseFormat: { type: 'json', schema: request.outputSchema as JSONSchema7 } }
      : {}),
    // The Ollama provider sends maxOutputTokens as a top-level field Ollama ignores; its real
    // limit is options.num_predict.
    ...(request.provider === 'ollama' && request.maxOutputTokens !== undefined
      ? { providerOptions: { ollama: { options: { num_predict: request.maxOutputTokens } } } }
      : {}),
  };
}

/**
 * The LlmResult of a model's answer, as generateText would give it: for structured output the
 * answer is parsed only after a stop or a non-empty answer, from the provider's structured text
 * when it gives one (Anthropic's json tool); not JSON: no object.
 */
export function toResult(
  request: LlmRequest,
  text: string,
  unifiedFinishReason: string,
  input: number | undefined,
  output: number | undefined,
  facts: LlmResponseFacts,
  structuredOutputText?: string,
): LlmResult {
  const finishReason = mapFinishReason(unifiedFinishReason);
  const usage = {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input === undefined && output === undefined ? undefined : (input ?? 0) + (output ?? 0),
  };
  // Every key on every result, whichever path read the answer (the direct reader or the SDK's).
  const { rawFinishReason, responseId, responseModel } = facts;
  if (!request.outputSchema) return { text, finishReason, usage, rawFinishReason, responseId, responseModel };
  const answered = finishReason === 'stop' || (finishReason !== 'tool-calls' && text.length > 0);
  const object = answered ? parseAnswer(structuredOutputText ?? text) : undefined;
  return {
    text: answered ? (structuredOutputText ?? text) : text,
    object,
    finishReason,
    usage,
    rawFinishReason,
    responseId,
    responseModel,
  };
}

/** What the AI SDK's provider read of the vendor's answer about itself (LlmResponseFacts). */
export function responseFacts(
  finishReason: { raw: string | undefined },
  response: { id?: string | undefined; modelId?: string | undefined } | undefined,
): LlmResponseFacts {
  return { rawFinishReason: finishReason.raw, responseId: response?.id, responseModel: response?.modelId };
}
