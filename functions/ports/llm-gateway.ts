import type { RunSteps } from './run-steps.ts';

/**
 * The LlmGateway port: one model call, whatever the vendor. The adapter
 * (functions/adapters/llm/ai-sdk-gateway.ts) speaks to Anthropic, OpenAI, Google and Ollama through
 * the Vercel AI SDK's providers (a prompt call sends the request the provider built and reads the
 * common answers itself: see generate there); tests point it at loopback fakes that speak each
 * vendor's wire format.
 */
export const LLM_PROVIDER_IDS = ['anthropic', 'openai', 'google', 'ollama'] as const;
export type LlmProviderId = (typeof LLM_PROVIDER_IDS)[number];

export interface LlmRequest {
  provider: LlmProviderId;
  model: string;
  /** System instructions (skills are appended here). */
  system?: string;
  /** The rendered prompt, sent as the user message. */
  prompt: string;
  /** When set, the model is asked for a JSON object matching this JSON Schema (structured output). */
  outputSchema?: Record<string, unknown>;
  maxOutputTokens?: number;
  /**
   * Streams the answer: the model is asked to stream, and each piece of its text is handed here as
   * it arrives; the result is the same as without it. Ignored with outputSchema. The model's stream
   * is read no further until the promise it returns resolves (the caller's backpressure).
   */
  onText?: ((text: string) => void | Promise<void>) | undefined;
  /**
   * With onText: told the provider's own token counts as its stream reports them, before the
   * answer's end (Anthropic's message_start carries the input tokens): what a request cut off
   * mid-answer was billed, which its result, never reached, would have said.
   */
  onUsage?: ((usage: LlmStreamedUsage) => void) | undefined;
  /** Aborts the upstream request (deadline passed, caller gone). */
  signal: AbortSignal;
}

/** Token counts a provider's stream reported so far (either may be missing). */
export interface LlmStreamedUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

export type LlmFinishReason =
  | 'stop'
  | 'length'
  | 'content-filter'
  | 'tool-calls'
  | 'error'
  | 'other'
  | 'unknown';

export interface LlmResult extends LlmResponseFacts {
  /** The model's text (with outputSchema: the JSON text it produced). */
  text: string;
  /** With outputSchema: the parsed object, before the platform validates it. */
  object?: unknown;
  finishReason: LlmFinishReason;
  usage: {
    inputTokens: number | undefined;
    outputTokens: number | undefined;
    totalTokens: number | undefined;
  };
}

/**
 * What the vendor's answer says of itself, as the AI SDK's provider reads it, where it says it: for
 * the model request's span (OpenTelemetry's `gen_ai.response.*`: core/traces/model-spans.ts).
 */
export interface LlmResponseFacts {
  /** The vendor's own finish reason (`end_turn`, `STOP`, `stop`…), before it is unified. */
  rawFinishReason?: string | undefined;
  /** The vendor's id of its answer (`chatcmpl-…`, `msg_…`). */
  responseId?: string | undefined;
  /** The model that answered, as the vendor names it (a dated version of the one asked for). */
  responseModel?: string | undefined;
}

/**
 * How a provider failed, as the platform tells it without the provider's words: it answered an
 * error status (`http_status`), gave no answer (`unreachable`), answered a success the platform
 * could not read (`malformed_answer`), failed in the middle of a streamed answer (`stream_error`:
 * its error event, or a stream that ended before its finish), or something else went wrong in the
 * request (`other`).
 */
export type LlmFailureKind = 'http_status' | 'unreachable' | 'malformed_answer' | 'stream_error' | 'other';

/**
 * A failure of the upstream provider: the platform answers 502 LLM_ERROR. What a caller may see is
 * the kind, the status and the vendor's error type; `message` says only these. The vendor's own
 * words (`providerText`) can quote the request, a server-only prompt template or the caller's input,
 * in fragments no cleaning finds: they are only for the agent's logs (docs/calls.md, "Provider
 * errors"), with API keys removed.
 */
export class LlmError extends Error {
  override name = 'LlmError';
  readonly provider: LlmProviderId;
  readonly kind: LlmFailureKind;
  /** The provider's HTTP status (or the status its stream error names), when it gave one. */
  readonly status: number | undefined;
  /**
   * The vendor's name for the error, when its answer gave one in the usual place (Anthropic
   * `error.type`, OpenAI `error.type` or `error.code`, Gemini `error.status`): an identifier of at
   * most 64 characters, or nothing.
   */
  readonly providerErrorType: string | undefined;
  /** The provider's message, keys removed and shortened: the agent's logs only, never the caller. */
  readonly providerText: string | undefined;
  constructor(
    provider: LlmProviderId,
    kind: LlmFailureKind,
    found: {
      status?: number | undefined;
      providerErrorType?: string | undefined;
      providerText?: string;
    } = {},
  ) {
    super(
      `The ${provider} provider failed (${kind}${found.status !== undefined ? `, HTTP ${found.status}` : ''}${found.providerErrorType ? `, ${found.providerErrorType}` : ''})`,
    );
    this.provider = provider;
    this.kind = kind;
    this.status = found.status;
    this.providerErrorType = found.providerErrorType;
    this.providerText = found.providerText;
  }
}

/** The request was aborted by its signal (the platform turns this into 504 TIMEOUT). */
export class LlmAbortedError extends Error {
  override name = 'LlmAbortedError';
}

/** The provider is not configured (no API key, or no base URL for Ollama): 502 with a clear message. */
export class LlmNotConfiguredError extends Error {
  override name = 'LlmNotConfiguredError';
}

/** A tool the model may call in a tool loop; the platform executes it. */
export interface LlmTool {
  /** The providers' tool-name rule: letters, digits, `_` and `-`, at most 64. */
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). The gateway does not validate: `execute` does. */
  inputSchema: Record<string, unknown>;
  /**
   * Runs the tool and returns the text the model sees as its result. A thrown error is not fatal:
   * its message goes back to the model as a tool error (is_error) and the loop goes on. `call`:
   * the model's id of this call of the tool (the same on a replay: it is in the model's answer).
   */
  execute(args: unknown, call?: LlmToolCallInfo): Promise<string>;
}

export interface LlmToolCallInfo {
  toolCallId: string;
}

export interface LlmToolLoopRequest {
  provider: LlmProviderId;
  model: string;
  system?: string;
  /** The user message that starts the loop. */
  prompt: string;
  tools: LlmTool[];
  /** Model calls (turns) at most; the loop stops after this many even if the model wants more. */
  maxTurns: number;
  /** The tool whose call ends the loop (after it has executed), e.g. `submit_result`. */
  submitTool: string;
  maxOutputTokens?: number;
  signal: AbortSignal;
  /** Told of each model request of the loop once it answered (its span: core/traces/model-spans.ts). */
  onModelCall?: ((call: LlmModelCall) => void) | undefined;
  /**
   * The run's steps (ports/run-steps.ts): each model request is the step `model-<turn>`, and a
   * replayed loop is answered the recorded ones without a request (and without onModelCall).
   */
  steps?: RunSteps | undefined;
}

/** One model request of a tool loop: when it ran and what it used. */
export interface LlmModelCall extends LlmResponseFacts {
  /** Epoch ms (process clock). */
  startedMs: number;
  endedMs: number;
  finishReason: LlmFinishReason;
  usage: LlmResult['usage'];
  /** The model request's failure, when it failed: the error's class name (no message: it may quote the prompt). */
  error?: string | undefined;
}

export interface LlmToolLoopResult {
  /** Model calls made. */
  turns: number;
  /** The last model call's finish reason. */
  finishReason: LlmFinishReason;
  /** Summed over all turns. */
  usage: LlmResult['usage'];
  /**
   * Why the loop ended: `submit` (the last turn called the submit tool), `max_turns` (the model
   * still wanted tools after maxTurns turns), `no_tool_call` (the model answered without a tool).
   */
  stoppedBy: 'submit' | 'max_turns' | 'no_tool_call';
  /** The last turn's text, if any. */
  text: string;
}

export interface LlmGateway {
  generate(request: LlmRequest): Promise<LlmResult>;
  /**
   * Optional capability: a tool-use loop (the managed_loop engine). Errors as generate(): LlmError,
   * LlmAbortedError, LlmNotConfiguredError. A gateway without it cannot run managed-loop agents.
   */
  runToolLoop?(request: LlmToolLoopRequest): Promise<LlmToolLoopResult>;
}
