import {
  generateText,
  type JSONSchema7,
  jsonSchema,
  stepCountIs,
  type ToolSet,
  tool,
  wrapLanguageModel,
} from 'ai';
import type { LlmProviderConfig } from '../../ports/config.ts';
import {
  LlmAbortedError,
  LlmError,
  type LlmGateway,
  LlmNotConfiguredError,
  type LlmProviderId,
  type LlmRequest,
  type LlmResponseFacts,
  type LlmResult,
  type LlmToolLoopRequest,
  type LlmToolLoopResult,
} from '../../ports/llm-gateway.ts';
import { ENV } from '../../shared/env-names.ts';
import {
  callOptions,
  mapFinishReason,
  mapUsage,
  responseFacts,
  streamedUsage,
  submitted,
  toResult,
} from './ai-sdk-results.ts';
import { fetchTransport, type ModelAnswer, type ModelTransport } from './model-transport.ts';
import { readPromptAnswer } from './prompt-answer-readers.ts';
import { fillTemplate, PromptRequestTemplates } from './prompt-request-templates.ts';
import { providerError } from './provider-errors.ts';
import { createFactory, type ModelFactory, type ModelV4 } from './provider-models.ts';
import { recordedTurns } from './recorded-turns.ts';
import { type CapturedRequest, offline, offlineFetch } from './sdk-offline-fetch.ts';

/** The configuration the gateway needs: `config.llm`. */
export type LlmProvidersConfig = Record<LlmProviderId, LlmProviderConfig>;

/** The setting whose absence leaves a provider unconfigured, by its environment variable name. */
const REQUIRED_SETTING: Record<LlmProviderId, string> = {
  anthropic: ENV.anthropicApiKey,
  openai: ENV.openaiApiKey,
  google: ENV.googleApiKey,
  ollama: ENV.ollamaBaseUrl,
};

/**
 * The LlmGateway over the Vercel AI SDK (v7). One provider instance per vendor, built on first
 * use from `config.llm` and cached. Base URLs are the SDK's shapes: Anthropic `…/v1` (the SDK
 * appends `/messages`), OpenAI `…/v1` (`/chat/completions`: the Chat Completions API), Google
 * `…/v1beta` (`/models/{model}:generateContent`), Ollama `…/api` (`/chat`; a bare
 * `http://host:11434` gets `/api` appended, as Ollama's own clients take the host alone).
 *
 * Structured output asks the model with the JSON response format (`responseFormat: { type:
 * 'json', schema }`): each provider sends its vendor's native JSON-schema mode (Anthropic
 * output_config.format or a forced `json` tool, OpenAI response_format json_schema, Gemini
 * responseJsonSchema, Ollama format). The gateway only parses the JSON; the platform validates.
 * No retries inside a call (maxRetries 0 in the tool loop): the platform's deadline governs.
 */
export class AiSdkGateway implements LlmGateway {
  private readonly config: LlmProvidersConfig;
  /** Per provider, its model factory sending through `fetch` (live) or through offlineFetch. */
  private readonly factories = new Map<string, Promise<ModelFactory>>();
  private readonly fetch: typeof fetch | undefined;
  private readonly send: ModelTransport;
  private readonly direct: boolean;
  private readonly templates = new PromptRequestTemplates((request) => this.captureRequest(request));

  /**
   * `fetch`: what the providers reach the vendors with (the global fetch when not given); `send`:
   * what the platform's own prompt calls are sent with (the global fetch when not given);
   * `promptCalls: 'sdk'` has the SDK send every prompt call itself (the reference that
   * test/adapters/direct-prompt-call.test.ts compares the platform's own calls with).
   */
  constructor(
    config: LlmProvidersConfig,
    options: { fetch?: typeof fetch; send?: ModelTransport; promptCalls?: 'direct' | 'sdk' } = {},
  ) {
    this.config = config;
    this.fetch = options.fetch;
    this.send = options.send ?? fetchTransport;
    this.direct = options.promptCalls !== 'sdk';
    // The SDK prints a process warning per call for compatibility notes (unknown model ids and the
    // like); a server does not want that noise on stderr. Left alone if someone set it already.
    globalThis.AI_SDK_LOG_WARNINGS ??= false;
  }

  /**
   * One prompt call. The platform sends it itself when it can (test/adapters/direct-prompt-call.test.ts
   * checks every case against the SDK's own): the request is the SDK provider's, built once per
   * shape (prompt-request-templates.ts) with the texts written in, sent over the transport, and
   * the answer read by the vendor's reader (prompt-answer-readers.ts). What the readers do not
   * read (an error status, a failure to connect, a refusal, a tool call, a shape they do not know)
   * goes to the SDK's provider as the same bytes (sdk-offline-fetch.ts), so it is reported as the
   * SDK reports it. A shape the templates cannot hold goes through the SDK whole.
   *
   * Why not the SDK on every call: with the provider layer and its fetch on every call the gateway
   * bench's CPU target is out of reach (docs/performance.md, "Call gateway overhead", item 8);
   * rebuilding the same request and validating the answer with zod on every call is most of what
   * they cost.
   */
  async generate(request: LlmRequest): Promise<LlmResult> {
    if (request.onText && !request.outputSchema)
      return this.sdkStream(await this.model(request, 'streamed'), request);
    const template = this.direct ? await this.templates.get(request) : null;
    if (request.signal.aborted) throw new LlmAbortedError('The LLM request was aborted before it started');
    if (!template) return this.sdkGenerate(await this.model(request, 'live'), request);
    let answer: ModelAnswer;
    try {
      answer = await this.send(template.url, {
        headers: template.headers,
        body: fillTemplate(template, request),
        signal: request.signal,
      });
    } catch (failure) {
      if (request.signal.aborted) throw new LlmAbortedError(`The ${request.provider} request was aborted`);
      return offline({ failure }, async () =>
        this.sdkGenerate(await this.model(request, 'offline'), request),
      );
    }
    const read =
      answer.status >= 200 && answer.status < 300 && answer.bodyError === undefined
        ? readPromptAnswer(request.provider, answer.bytes, request.model)
        : undefined;
    if (read)
      return toResult(request, read.text, read.finishReason, read.inputTokens, read.outputTokens, read);
    return offline({ answer, live: this.fetch ?? globalThis.fetch }, async () =>
      this.sdkGenerate(await this.model(request, 'offline'), request),
    );
  }

  /**
   * One model call through the provider's own `doGenerate` (the AI SDK's LanguageModelV4
   * interface: the provider builds the vendor's request, sends it and reads the answer), not
   * through `generateText`. A prompt call is one step with no tools, so generateText's step loop,
   * telemetry dispatch, callbacks, signal merging and output cloning do nothing for it but cost CPU
   * on every call (docs/performance.md, "Call gateway overhead", item 6). What
   * generateText would add is done here and in toResult: the instructions as a system message,
   * the JSON response format for structured output, and the answer parsed as generateText parses
   * it (only after a stop or a non-empty answer).
   */
  private async sdkGenerate(model: ModelV4, request: LlmRequest): Promise<LlmResult> {
    try {
      const result = await model.doGenerate(callOptions(request));
      let text = '';
      for (const part of result.content) if (part.type === 'text') text += part.text;
      return toResult(
        request,
        text,
        result.finishReason.unified,
        result.usage.inputTokens.total,
        result.usage.outputTokens.total,
        responseFacts(result.finishReason, result.response),
        result.structuredOutputText,
      );
    } catch (error) {
      throw this.mapError(request, error);
    }
  }

  /**
   * A streamed prompt call through the provider's own `doStream`: the vendor's streaming request,
   * its server-sent events read by the provider, each text piece handed to `onText` as it comes.
   * The result is what `sdkGenerate` gives for the same answer. A failure mid-stream (the
   * provider's error event, a connection lost) is the call's failure, as before any byte.
   */
  private async sdkStream(model: ModelV4, request: LlmRequest): Promise<LlmResult> {
    if (request.signal.aborted) throw new LlmAbortedError('The LLM request was aborted before it started');
    const onText = request.onText as (text: string) => void | Promise<void>;
    const onUsage = request.onUsage;
    try {
      // The vendor's own chunks too, when its usage events are wanted: the SDK's parts report usage
      // only in the finish part, which a request cut off never reaches.
      const { stream } = await model.doStream({
        ...callOptions(request),
        includeRawChunks: onUsage !== undefined,
      });
      let text = '';
      let finish: { reason: string; input: number | undefined; output: number | undefined } | undefined;
      let facts: LlmResponseFacts = {};
      let metadata: { id?: string | undefined; modelId?: string | undefined } | undefined;
      for await (const part of stream) {
        if (part.type === 'raw') {
          const usage = streamedUsage(part.rawValue);
          if (usage) onUsage?.(usage);
        } else if (part.type === 'text-delta') {
          text += part.delta;
          // Awaited: the provider's stream (and the vendor's connection) waits for the caller.
          if (part.delta) await onText(part.delta);
        } else if (part.type === 'response-metadata') {
          metadata = part;
        } else if (part.type === 'finish') {
          finish = {
            reason: part.finishReason.unified,
            input: part.usage.inputTokens.total,
            output: part.usage.outputTokens.total,
          };
          facts = responseFacts(part.finishReason, metadata);
        } else if (part.type === 'error') throw part.error;
      }
      if (!finish)
        throw new LlmError(request.provider, 'stream_error', {
          providerText: 'the stream ended before its finish event',
        });
      return toResult(request, text, finish.reason, finish.input, finish.output, facts);
    } catch (error) {
      throw this.mapError(request, error);
    }
  }

  /** Builds the provider's request for a prompt call without sending it (for the templates). */
  private async captureRequest(request: LlmRequest): Promise<CapturedRequest | undefined> {
    const model = await this.model(request, 'offline');
    let captured: CapturedRequest | undefined;
    await offline({ capture: (r) => (captured = r) }, async () =>
      model.doGenerate(callOptions(request)),
    ).catch(() => undefined);
    return captured;
  }

  /**
   * The tool-use loop: `generateText` with the tools (`tool({ description, inputSchema:
   * jsonSchema(…), execute })`) and `stopWhen: [stepCountIs(maxTurns), hasToolCall(submitTool)]`.
   * The SDK runs each turn's tool calls, sends their results back (a thrown error as an is_error
   * result) and calls the model again until a stop condition holds or the model answers without
   * a tool call.
   */
  async runToolLoop(request: LlmToolLoopRequest): Promise<LlmToolLoopResult> {
    // Recorded outside the timing: a replayed turn sent no request, so it has no span.
    const model = recordedTurns(
      timedTurns(await this.model(request, 'live'), request.onModelCall),
      request.steps,
    );
    if (request.signal.aborted) throw new LlmAbortedError('The LLM request was aborted before it started');
    const tools: ToolSet = {};
    for (const t of request.tools) {
      tools[t.name] = tool({
        description: t.description,
        inputSchema: jsonSchema(t.inputSchema as JSONSchema7),
        execute: (args: unknown, { toolCallId }) => t.execute(args, { toolCallId }),
      });
    }
    try {
      const result = await generateText({
        model,
        instructions: request.system,
        prompt: request.prompt,
        tools,
        // Stops on a submission that went through: a refused one (a tool error) lets the model go on.
        stopWhen: [stepCountIs(request.maxTurns), submitted(request.submitTool)],
        maxOutputTokens: request.maxOutputTokens,
        abortSignal: request.signal,
        maxRetries: 0,
      });
      const last = result.steps.at(-1);
      const didSubmit = last?.toolResults.some((r) => r.toolName === request.submitTool) ?? false;
      const finishReason = mapFinishReason(result.finishReason);
      return {
        turns: result.steps.length,
        finishReason,
        usage: mapUsage(result.totalUsage),
        stoppedBy: didSubmit ? 'submit' : finishReason === 'tool-calls' ? 'max_turns' : 'no_tool_call',
        text: result.text,
      };
    } catch (error) {
      throw this.mapError(request, error);
    }
  }

  /**
   * The provider's model. Its package is imported on the provider's first call, so that a call
   * loads one provider's code (150-220 KB each), not all four; the import is cached with the
   * factory, and a failed one is forgotten so that the next call tries again. `offline`: the
   * instance whose fetch never sends (sdk-offline-fetch.ts).
   */
  private async model(
    request: { provider: LlmProviderId; model: string },
    kind: 'live' | 'streamed' | 'offline',
  ): Promise<ModelV4> {
    const { provider } = request;
    const key = `${kind}:${provider}`;
    let created = this.factories.get(key);
    if (!created) {
      const settings = this.config[provider];
      const missing = provider === 'ollama' ? !settings?.baseUrl : !settings?.apiKey;
      if (missing) {
        throw new LlmNotConfiguredError(
          `The ${provider} provider is not configured: set ${REQUIRED_SETTING[provider]}`,
        );
      }
      // A streamed call reads the answer as it comes: the runtime's fetch, whose body is a stream
      // (the pooled fetch reads an answer whole: pooled-fetch.ts).
      const fetcher = kind === 'live' ? this.fetch : kind === 'streamed' ? undefined : offlineFetch;
      created = createFactory(provider, settings, fetcher);
      this.factories.set(key, created);
      created.catch(() => this.factories.delete(key));
    }
    return (await created)(request.model);
  }

  private mapError(request: Pick<LlmRequest, 'provider' | 'signal'>, error: unknown): Error {
    return providerError(request, error, this.config[request.provider]?.apiKey);
  }
}

/**
 * The model with each of its requests timed and reported (a loop turn's span), through the AI SDK's
 * own middleware: only the model's request is timed, not the tools the turn then runs.
 */
function timedTurns(model: ModelV4, report: LlmToolLoopRequest['onModelCall']): ModelV4 {
  if (!report) return model;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate }) => {
        const startedMs = Date.now();
        try {
          const result = await doGenerate();
          report({
            startedMs,
            endedMs: Date.now(),
            finishReason: mapFinishReason(result.finishReason.unified),
            ...responseFacts(result.finishReason, result.response),
            usage: {
              inputTokens: result.usage.inputTokens.total,
              outputTokens: result.usage.outputTokens.total,
              totalTokens: undefined,
            },
          });
          return result;
        } catch (err) {
          const usage = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined };
          const error = err instanceof Error ? err.name : 'Error';
          report({ startedMs, endedMs: Date.now(), finishReason: 'error', usage, error });
          throw err;
        }
      },
    },
  });
}
