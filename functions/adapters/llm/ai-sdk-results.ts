/*
 * Between the AI SDK's answers and the LlmGateway port: finish reasons, token usage, structured
 * answers and a prompt call's options (ai-sdk-gateway.ts; its errors: provider-errors.ts).
 */
import type { FinishReason, JSONSchema7, LanguageModelUsage } from 'ai';
import type {
  LlmFinishReason,
  LlmRequest,
  LlmResponseFacts,
  LlmResult,
  LlmStreamedUsage,
} from '../../ports/llm-gateway.ts';
import { jsonTooDeep } from '../../shared/json-depth.ts';
import type { ModelV4 } from './provider-models.ts';

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

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null;
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * The token counts in one of a vendor's stream chunks, if it has any: Anthropic's message_start
 * (`message.usage`: the input, cached input counted apart, as the SDK sums it) and message_delta
 * (`usage.output_tokens`, cumulative), OpenAI's last chunk (`usage`, asked for with
 * stream_options.include_usage), Gemini's `usageMetadata`.
 */
export function streamedUsage(raw: unknown): LlmStreamedUsage | undefined {
  if (!isJson(raw)) return undefined;
  const message = isJson(raw.message) ? raw.message : undefined;
  const usage = isJson(message?.usage) ? message.usage : isJson(raw.usage) ? raw.usage : undefined;
  if (usage) {
    const anthropicInput = count(usage.input_tokens);
    const inputTokens =
      anthropicInput !== undefined
        ? anthropicInput +
          (count(usage.cache_creation_input_tokens) ?? 0) +
          (count(usage.cache_read_input_tokens) ?? 0)
        : count(usage.prompt_tokens);
    const outputTokens = count(usage.output_tokens) ?? count(usage.completion_tokens);
    if (inputTokens !== undefined || outputTokens !== undefined) return { inputTokens, outputTokens };
  }
  if (isJson(raw.usageMetadata)) {
    const inputTokens = count(raw.usageMetadata.promptTokenCount);
    const outputTokens = count(raw.usageMetadata.candidatesTokenCount);
    if (inputTokens !== undefined || outputTokens !== undefined) return { inputTokens, outputTokens };
  }
  return undefined;
}
