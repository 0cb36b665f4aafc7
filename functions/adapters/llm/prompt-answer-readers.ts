import { secureJsonParse } from '@ai-sdk/provider-utils';
import type { LlmProviderId, LlmResponseFacts } from '../../ports/llm-gateway.ts';

/**
 * What a prompt call needs from a vendor's successful answer: the text, the finish reason in the
 * AI SDK's unified terms, and the token counts as the SDK's providers count them; and what the
 * answer says of itself (its raw finish reason, id and model) where the SDK's provider reads it.
 */
export interface PromptAnswer extends LlmResponseFacts {
  text: string;
  /** The AI SDK's unified finish reason (`stop`, `length`, `content-filter`, `tool-calls`, `error`, `other`). */
  finishReason: string;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/**
 * Reads a vendor's 2xx answer to a prompt call, as the AI SDK's provider would read it, for the
 * answers a prompt call gets: text (and reasoning, which a prompt call does not return), a finish
 * reason, usage. Anything else (a refusal, tool calls, server tools, continuation, a shape the
 * reader does not know, a field of the wrong type) gives `undefined`, and the caller hands the
 * same bytes to the SDK's provider to read (ai-sdk-gateway.ts, `generate`): so an answer is either read
 * here exactly as the SDK reads it (test/adapters/direct-prompt-answers.test.ts compares the two on
 * every case) or read by the SDK.
 *
 * Each mapping mirrors the provider package's own (the functions named in each reader), at the
 * versions in package.json; the comparison test fails if an upgrade changes one.
 */
export const PROMPT_ANSWER_READERS: Record<
  LlmProviderId,
  (answer: unknown, model: string) => PromptAnswer | undefined
> = {
  openai: readOpenAiChat,
  anthropic: readAnthropicMessages,
  google: readGoogleGenerateContent,
  ollama: readOllamaChat,
};

/**
 * A vendor's successful answer read by its reader, or undefined for the SDK to read: not JSON, JSON
 * the SDK's secure parse refuses (a `__proto__` key or a `constructor.prototype`: the same parse
 * the providers use), or a shape the reader leaves to the SDK.
 */
export function readPromptAnswer(
  provider: LlmProviderId,
  bytes: Buffer,
  model: string,
): PromptAnswer | undefined {
  let json: unknown;
  try {
    json = secureJsonParse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  return PROMPT_ANSWER_READERS[provider](json, model);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number | null | undefined {
  return value == null || typeof value === 'number';
}

function isOptional(value: unknown, type: 'string' | 'number' | 'boolean'): boolean {
  return value == null || typeof value === type;
}

/** Absent, or an object of counts (the token-detail objects); anything else is the SDK's to judge. */
function isCounts(value: unknown): boolean {
  return value == null || (isObject(value) && Object.values(value).every(isCount));
}

/** OpenAI Chat Completions (@ai-sdk/openai: doGenerate, mapOpenAIFinishReason, convertOpenAIChatUsage). */
function readOpenAiChat(answer: unknown): PromptAnswer | undefined {
  // One choice (a prompt call asks for one; the SDK checks every choice's shape).
  if (!isObject(answer) || !Array.isArray(answer.choices) || answer.choices.length !== 1) return undefined;
  if (
    !isOptional(answer.id, 'string') ||
    !isOptional(answer.created, 'number') ||
    !isOptional(answer.model, 'string')
  )
    return undefined;
  const choice: unknown = answer.choices[0];
  if (!isObject(choice) || !isObject(choice.message) || typeof choice.index !== 'number') return undefined;
  if (choice.logprobs != null) return undefined;
  const { content, refusal, tool_calls: toolCalls, audio, role, annotations } = choice.message;
  if (role != null && role !== 'assistant') return undefined;
  if (annotations != null && !(Array.isArray(annotations) && annotations.length === 0)) return undefined;
  if (content != null && typeof content !== 'string') return undefined;
  // A refusal is the SDK's content-filter case with its own text part; tool calls and audio are
  // not a prompt call's: the SDK reads those.
  if (refusal != null || audio != null) return undefined;
  if (toolCalls != null && !(Array.isArray(toolCalls) && toolCalls.length === 0)) return undefined;
  const finish = choice.finish_reason;
  if (finish != null && typeof finish !== 'string') return undefined;
  const usage = answer.usage;
  if (
    usage != null &&
    !(
      isObject(usage) &&
      isCount(usage.prompt_tokens) &&
      isCount(usage.completion_tokens) &&
      isCount(usage.total_tokens) &&
      isCounts(usage.prompt_tokens_details) &&
      isCounts(usage.completion_tokens_details)
    )
  )
    return undefined;
  return {
    text: content ?? '',
    finishReason: chatFinishReason(finish),
    inputTokens: usage == null ? undefined : ((usage.prompt_tokens as number | null) ?? 0),
    outputTokens: usage == null ? undefined : ((usage.completion_tokens as number | null) ?? 0),
    // getResponseMetadata and the finish reason's raw value.
    rawFinishReason: finish ?? undefined,
    responseId: (answer.id as string | null | undefined) ?? undefined,
    responseModel: (answer.model as string | null | undefined) ?? undefined,
  };
}

/**
 * OpenAI's finish reasons, which Ollama's chat answer shares (@ai-sdk/openai mapOpenAIFinishReason
 * without a refusal, which the reader leaves to the SDK; ollama-ai-provider-v2 mapOllamaFinishReason).
 */
function chatFinishReason(reason: string | null | undefined): string {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'function_call':
    case 'tool_calls':
      return 'tool-calls';
    default:
      return 'other';
  }
}

/** Anthropic Messages (@ai-sdk/anthropic: doGenerate, mapAnthropicStopReason, convertAnthropicUsage). */
function readAnthropicMessages(answer: unknown): PromptAnswer | undefined {
  if (
    !isObject(answer) ||
    answer.type !== 'message' ||
    !Array.isArray(answer.content) ||
    !isObject(answer.usage)
  )
    return undefined;
  if (!isOptional(answer.id, 'string') || !isOptional(answer.model, 'string')) return undefined;
  let text = '';
  for (const part of answer.content) {
    if (!isObject(part)) return undefined;
    if (part.type === 'text') {
      // Citations become sources in the SDK: it reads those.
      if (typeof part.text !== 'string' || part.citations != null) return undefined;
      text += part.text;
    } else if (part.type === 'thinking') {
      if (typeof part.thinking !== 'string' || typeof part.signature !== 'string') return undefined;
    } else if (part.type === 'redacted_thinking') {
      if (typeof part.data !== 'string') return undefined;
    } else {
      return undefined; // tool use, server tools, compaction, …: the SDK reads them
    }
  }
  const stop = answer.stop_reason;
  if (stop != null && typeof stop !== 'string') return undefined;
  if (!isOptional(answer.stop_sequence, 'string')) return undefined;
  const usage = answer.usage;
  if (usage.iterations != null) return undefined;
  const { input_tokens: input, output_tokens: output } = usage;
  const cacheWrite = usage.cache_creation_input_tokens;
  const cacheRead = usage.cache_read_input_tokens;
  if (
    typeof input !== 'number' ||
    typeof output !== 'number' ||
    !isCount(cacheWrite) ||
    !isCount(cacheRead) ||
    !isCounts(usage.output_tokens_details)
  )
    return undefined;
  return {
    text,
    finishReason:
      stop === 'end_turn' || stop === 'stop_sequence' || stop === 'pause_turn'
        ? 'stop'
        : stop === 'refusal'
          ? 'content-filter'
          : stop === 'tool_use'
            ? 'tool-calls'
            : stop === 'max_tokens' || stop === 'model_context_window_exceeded'
              ? 'length'
              : 'other',
    inputTokens: input + (cacheWrite ?? 0) + (cacheRead ?? 0),
    outputTokens: output,
    rawFinishReason: stop ?? undefined,
    responseId: (answer.id as string | null | undefined) ?? undefined,
    responseModel: (answer.model as string | null | undefined) ?? undefined,
  };
}

const GOOGLE_CONTENT_FILTER = new Set([
  'IMAGE_SAFETY',
  'RECITATION',
  'SAFETY',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
]);

/** Gemini generateContent (@ai-sdk/google: convertGenerateContentResponse, mapGoogleFinishReason, convertGoogleUsage). */
function readGoogleGenerateContent(answer: unknown): PromptAnswer | undefined {
  if (!isObject(answer) || !Array.isArray(answer.candidates) || !isOptional(answer.responseId, 'string'))
    return undefined;
  // A blocked prompt and a continued answer (CONTINUATION: the SDK asks again) are the SDK's.
  if (answer.promptFeedback != null) return undefined;
  const candidate: unknown = answer.candidates[0];
  if (!isObject(candidate)) return undefined;
  const finish = candidate.finishReason;
  if (typeof finish !== 'string' || finish === 'CONTINUATION') return undefined;
  if (candidate.content != null && !isObject(candidate.content)) return undefined;
  const parts = candidate.content?.parts ?? [];
  if (!Array.isArray(parts)) return undefined;
  let text = '';
  for (const part of parts) {
    if (!isObject(part) || typeof part.text !== 'string') return undefined;
    if (!isOptional(part.thought, 'boolean') || !isOptional(part.thoughtSignature, 'string'))
      return undefined;
    for (const key in part)
      if (key !== 'text' && key !== 'thought' && key !== 'thoughtSignature') return undefined;
    if (part.thought !== true) text += part.text;
  }
  const usage = answer.usageMetadata;
  if (
    usage != null &&
    !(
      isObject(usage) &&
      isCount(usage.promptTokenCount) &&
      isCount(usage.candidatesTokenCount) &&
      isCount(usage.toolUsePromptTokenCount) &&
      isCount(usage.thoughtsTokenCount) &&
      isCount(usage.cachedContentTokenCount) &&
      isCount(usage.totalTokenCount)
    )
  )
    return undefined;
  return {
    text,
    finishReason:
      finish === 'STOP'
        ? 'stop'
        : finish === 'MAX_TOKENS'
          ? 'length'
          : GOOGLE_CONTENT_FILTER.has(finish)
            ? 'content-filter'
            : finish === 'MALFORMED_FUNCTION_CALL'
              ? 'error'
              : 'other',
    inputTokens:
      usage == null
        ? undefined
        : ((usage.promptTokenCount as number | null) ?? 0) +
          ((usage.toolUsePromptTokenCount as number | null) ?? 0),
    outputTokens:
      usage == null
        ? undefined
        : ((usage.candidatesTokenCount as number | null) ?? 0) +
          ((usage.thoughtsTokenCount as number | null) ?? 0),
    // The provider gives the answer's id, not its model (modelVersion).
    rawFinishReason: finish,
    responseId: (answer.responseId as string | null | undefined) ?? undefined,
    responseModel: undefined,
  };
}

/**
 * Ollama /api/chat (ollama-ai-provider-v2: OllamaResponseProcessor, mapOllamaFinishReason, and
 * doGenerate's response, which names the model asked for, `model`, and no id).
 */
function readOllamaChat(answer: unknown, model: string): PromptAnswer | undefined {
  if (
    !isObject(answer) ||
    typeof answer.model !== 'string' ||
    typeof answer.created_at !== 'string' ||
    typeof answer.done !== 'boolean' ||
    !isObject(answer.message)
  )
    return undefined;
  const { content, role, tool_calls: toolCalls, thinking } = answer.message;
  if (typeof content !== 'string' || typeof role !== 'string') return undefined;
  if (thinking !== undefined && typeof thinking !== 'string') return undefined;
  for (const field of ['eval_duration', 'load_duration', 'prompt_eval_duration', 'total_duration'])
    if (answer[field] !== undefined && typeof answer[field] !== 'number') return undefined;
  if (toolCalls != null && !(Array.isArray(toolCalls) && toolCalls.length === 0)) return undefined;
  const done = answer.done_reason;
  if (done !== undefined && typeof done !== 'string') return undefined;
  const { prompt_eval_count: input, eval_count: output } = answer;
  if (
    !(input === undefined || typeof input === 'number') ||
    !(output === undefined || typeof output === 'number')
  )
    return undefined;
  return {
    text: content,
    finishReason: chatFinishReason(done),
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    rawFinishReason: done,
    responseId: undefined,
    responseModel: model,
  };
}
