// biome-ignore-all lint/suspicious/noExplicitAny: vendor wire bodies are loosely shaped JSON, read defensively.
/**
 * Fake LLM providers: one loopback HTTP server that speaks four vendors' wire formats at the paths
 * the AI SDK calls when given these base URLs (no test reaches beyond loopback):
 *
 * - Anthropic Messages:        POST {baseUrls.anthropic}/messages          (base …/anthropic/v1)
 * - OpenAI Chat Completions:   POST {baseUrls.openai}/chat/completions     (base …/openai/v1)
 * - Gemini generateContent:    POST {baseUrls.google}/models/{model}:generateContent (base …/google/v1beta)
 * - Ollama chat (non-stream):  POST {baseUrls.ollama}/chat                 (base …/ollama/api)
 *
 * Answers are scripted per test: queued responses first (`enqueue`), then the responder
 * (`setResponder`), then the default, which echoes: text `echo: <last user message>` (for a
 * structured-output request, the JSON `{ "echo": <last user message> }`). Every request is
 * recorded in `calls` (unless `record: false`), with how it ended (`settled`).
 *
 * Tool use (Anthropic): a response with `toolCalls` answers `tool_use` content blocks with
 * stop_reason `tool_use`; the next request's `toolResults` are the `tool_result` blocks the SDK
 * sent back, and `tools` names the tools it offered.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeProvider = 'anthropic' | 'openai' | 'google' | 'ollama';

export interface FakeLlmCall {
  provider: FakeProvider;
  method: string;
  /** The request path, e.g. `/anthropic/v1/messages`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** The body as sent. */
  rawRequest: string;
  /** The model named in the request (Gemini: from the path). */
  model: string | undefined;
  /** The system instructions, as text. */
  system: string | undefined;
  /** The last user message, as text. */
  prompt: string;
  /** The max-output-tokens setting, under whatever name the vendor uses. */
  maxTokens: number | undefined;
  /** The JSON Schema asked for (structured output), if any. */
  schema: unknown;
  /** How structured output was asked for. */
  structured: 'anthropic-tool' | 'anthropic-output-format' | 'json-schema' | 'json' | undefined;
  /** The names of the tools offered (Anthropic and OpenAI). */
  tools: string[];
  /** Anthropic: the `tool_result` blocks of the last user message (content as text). */
  toolResults: FakeToolResult[];
  /** Resolves when the fake has answered, or when the client went away first. */
  settled: Promise<'answered' | 'disconnected'>;
  /**
   * A streamed answer: how many times the platform had not taken what the fake wrote (its write
   * returned false), so the fake waited for it to read on, as a vendor's server does.
   */
  pausedWrites: number;
}

export interface FakeToolResult {
  toolUseId: string;
  content: string;
  isError: boolean;
}

export interface FakeLlmResponse {
  /**
   * Anthropic: answer these `tool_use` blocks (after `text`, if given) with stop_reason `tool_use`.
   * Ids default to `toolu_fake<n>_<i>`.
   */
  toolCalls?: { name: string; input: unknown; id?: string }[];
  /** The answer text (with structured output: sent as is, so it may be invalid JSON). */
  text?: string;
  /** A JSON answer (sent as the tool input / JSON text). */
  json?: unknown;
  /** `length`: the vendor's max-tokens stop reason. Default `stop`. */
  finish?: 'stop' | 'length';
  /**
   * An HTTP error status instead of an answer. The body is `errorBody` if given, else the vendor's
   * error shape carrying `errorMessage` (default `fake <provider> error <status>`).
   */
  status?: number;
  errorBody?: unknown;
  errorMessage?: string;
  /** Send this body as is (with `status`, default 200) instead of a well-formed answer. */
  rawBody?: unknown;
  /** Send this text as the body (with `status`, default 200), JSON or not. */
  rawText?: string;
  /** Wait this long before answering; a client disconnect during the wait ends the call quietly. */
  delayMs?: number;
  usage?: { inputTokens?: number; outputTokens?: number };
  /**
   * A streamed request (`"stream": true`; OpenAI and Anthropic): the answer's text in these pieces
   * (default: word by word), each its own event of the vendor's streaming format.
   */
  chunks?: string[];
  /** Wait this long before each streamed piece. */
  chunkDelayMs?: number;
  /** Cut the connection after this many streamed pieces: a failure in mid-stream. */
  failAfterChunks?: number;
  /**
   * After this many streamed pieces, the vendor's own error event instead of the rest (Anthropic's
   * `event: error` with `{type: "error", error: {type, message}}`; OpenAI's `{"error": {message,
   * type}}` data line), and the stream ends.
   */
  streamError?: { afterChunks: number; type: string; message: string };
}

export type FakeLlmResponder = (
  call: FakeLlmCall,
) => FakeLlmResponse | undefined | Promise<FakeLlmResponse | undefined>;

export interface FakeLlmProviders {
  baseUrls: Record<FakeProvider, string>;
  /** The server's origin, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  calls: FakeLlmCall[];
  setResponder(responder: FakeLlmResponder | undefined): void;
  /** Scripted answers, used (first in, first out) before the responder. */
  enqueue(...responses: FakeLlmResponse[]): void;
  /** Forget recorded calls, queued answers and the responder. */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeLlmOptions {
  /** Record calls (default true). Turn off for benchmarks that drive many calls. */
  record?: boolean;
  /** How long an idle connection stays open (default 5 s, Node's). */
  keepAliveTimeoutMs?: number;
}

const ROUTES: { provider: FakeProvider; pattern: RegExp }[] = [
  { provider: 'anthropic', pattern: /^\/anthropic\/v1\/messages$/ },
  { provider: 'openai', pattern: /^\/openai\/v1\/chat\/completions$/ },
  { provider: 'google', pattern: /^\/google\/v1beta\/models\/([^/:]+):generateContent$/ },
  { provider: 'ollama', pattern: /^\/ollama\/api\/chat$/ },
];

export async function start(options: FakeLlmOptions = {}): Promise<FakeLlmProviders> {
  const record = options.record ?? true;
  const calls: FakeLlmCall[] = [];
  let queue: FakeLlmResponse[] = [];
  let responder: FakeLlmResponder | undefined;
  let counter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, { error: { message: `fake provider failure: ${String(error)}` } });
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    let route: { provider: FakeProvider; match: RegExpMatchArray } | undefined;
    for (const r of ROUTES) {
      const match = path.match(r.pattern);
      if (match) {
        route = { provider: r.provider, match };
        break;
      }
    }
    const raw = await readBody(req);
    if (!route || req.method !== 'POST') {
      sendJson(res, 404, { error: { message: `no fake route for ${req.method} ${path}` } });
      return;
    }
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }

    let resolveSettled!: (outcome: 'answered' | 'disconnected') => void;
    const settled = new Promise<'answered' | 'disconnected'>((resolve) => {
      resolveSettled = resolve;
    });
    const call: FakeLlmCall = {
      ...describe(route.provider, body, route.match),
      method: req.method,
      path,
      headers: req.headers,
      body,
      rawRequest: raw,
      settled,
      pausedWrites: 0,
    };
    if (record) calls.push(call);

    let timer: NodeJS.Timeout | undefined;
    let gone = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        gone = true;
        if (timer) clearTimeout(timer);
        resolveSettled('disconnected');
      }
    });

    const scripted = queue.length ? queue.shift() : await responder?.(call);
    const response = scripted ?? {};
    if (response.delayMs && response.delayMs > 0) {
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, response.delayMs);
        res.once('close', () => resolve());
      });
    }
    if (gone || res.destroyed) return;

    counter++;
    const streamed =
      body?.stream === true &&
      (route.provider === 'openai' || route.provider === 'anthropic') &&
      response.rawText === undefined &&
      response.rawBody === undefined &&
      !(response.status && response.status >= 400);
    if (streamed) {
      await streamAnswer(route.provider as 'openai' | 'anthropic', res, call, response, counter);
    } else if (response.rawText !== undefined) {
      res.writeHead(response.status ?? 200, { 'content-type': 'application/json' });
      res.end(response.rawText);
    } else if (response.rawBody !== undefined) {
      sendJson(res, response.status ?? 200, response.rawBody);
    } else if (response.status && response.status >= 400) {
      sendJson(
        res,
        response.status,
        response.errorBody ?? errorBody(route.provider, response.status, response.errorMessage),
      );
    } else {
      sendJson(res, response.status ?? 200, answer(route.provider, call, response, counter));
    }
    res.once('finish', () => resolveSettled('answered'));
  }

  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    baseUrls: {
      anthropic: `${origin}/anthropic/v1`,
      openai: `${origin}/openai/v1`,
      google: `${origin}/google/v1beta`,
      ollama: `${origin}/ollama/api`,
    },
    calls,
    setResponder(next) {
      responder = next;
    },
    enqueue(...responses) {
      queue.push(...responses);
    },
    reset() {
      calls.length = 0;
      queue = [];
      responder = undefined;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** Text of a message content: a string, or the text parts of a part list. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part.text === 'string' ? part.text : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

function lastUser(messages: unknown, role = 'user'): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === role) return contentText(m.content ?? m.parts);
  }
  return '';
}

type Described = Pick<
  FakeLlmCall,
  'provider' | 'model' | 'system' | 'prompt' | 'maxTokens' | 'schema' | 'structured' | 'tools' | 'toolResults'
>;

/** The tool_result blocks of the last user message of an Anthropic request. */
function anthropicToolResults(messages: unknown): FakeToolResult[] {
  if (!Array.isArray(messages)) return [];
  const last = [...messages].reverse().find((m: any) => m?.role === 'user');
  if (!last || !Array.isArray(last.content)) return [];
  return last.content
    .filter((part: any) => part?.type === 'tool_result')
    .map((part: any) => ({
      toolUseId: String(part.tool_use_id),
      content: typeof part.content === 'string' ? part.content : contentText(part.content),
      isError: part.is_error === true,
    }));
}

function describe(provider: FakeProvider, body: any, match: RegExpMatchArray): Described {
  const b = body ?? {};
  switch (provider) {
    case 'anthropic': {
      const tool = Array.isArray(b.tools) ? b.tools.find((t: any) => t?.name === 'json') : undefined;
      const format = b.output_config?.format;
      return {
        provider,
        model: b.model,
        system: b.system === undefined ? undefined : contentText(b.system),
        prompt: lastUser(b.messages),
        maxTokens: b.max_tokens,
        schema: tool ? tool.input_schema : format?.type === 'json_schema' ? format.schema : undefined,
        structured: tool ? 'anthropic-tool' : format ? 'anthropic-output-format' : undefined,
        tools: Array.isArray(b.tools) ? b.tools.map((t: any) => String(t?.name)) : [],
        toolResults: anthropicToolResults(b.messages),
      };
    }
    case 'openai': {
      const messages: any[] = Array.isArray(b.messages) ? b.messages : [];
      const sys = messages.filter((m) => m?.role === 'system' || m?.role === 'developer');
      const rf = b.response_format;
      return {
        provider,
        model: b.model,
        system: sys.length ? sys.map((m) => contentText(m.content)).join('\n') : undefined,
        prompt: lastUser(messages),
        maxTokens: b.max_completion_tokens ?? b.max_tokens,
        schema: rf?.type === 'json_schema' ? rf.json_schema?.schema : undefined,
        structured:
          rf?.type === 'json_schema' ? 'json-schema' : rf?.type === 'json_object' ? 'json' : undefined,
        tools: Array.isArray(b.tools) ? b.tools.map((t: any) => String(t?.function?.name)) : [],
        toolResults: [],
      };
    }
    case 'google': {
      const gc = b.generationConfig ?? {};
      const schema = gc.responseJsonSchema ?? gc.responseSchema;
      return {
        provider,
        model: decodeURIComponent(match[1] ?? ''),
        system: b.systemInstruction ? contentText(b.systemInstruction.parts) : undefined,
        prompt: lastUser(b.contents),
        maxTokens: gc.maxOutputTokens,
        schema,
        structured: schema ? 'json-schema' : gc.responseMimeType === 'application/json' ? 'json' : undefined,
        tools: [],
        toolResults: [],
      };
    }
    case 'ollama': {
      const messages: any[] = Array.isArray(b.messages) ? b.messages : [];
      const sys = messages.filter((m) => m?.role === 'system');
      return {
        provider,
        model: b.model,
        system: sys.length ? sys.map((m) => contentText(m.content)).join('\n') : undefined,
        prompt: lastUser(messages),
        maxTokens: b.options?.num_predict ?? b.max_output_tokens,
        schema: b.format && typeof b.format === 'object' ? b.format : undefined,
        structured: b.format && typeof b.format === 'object' ? 'json-schema' : b.format ? 'json' : undefined,
        tools: [],
        toolResults: [],
      };
    }
  }
}

function countWords(text: string | undefined): number {
  if (!text) return 0;
  let n = 0;
  for (const w of text.split(/\s+/)) if (w) n++;
  return n;
}

function answer(provider: FakeProvider, call: FakeLlmCall, r: FakeLlmResponse, n: number): unknown {
  let json = r.json;
  let text = r.text;
  if (provider === 'anthropic' && r.toolCalls) {
    const blocks = r.toolCalls.map((c, i) => ({
      type: 'tool_use',
      id: c.id ?? `toolu_fake${n}_${i}`,
      name: c.name,
      input: c.input,
    }));
    return {
      id: `msg_fake${n}`,
      type: 'message',
      role: 'assistant',
      model: call.model ?? 'unknown',
      content: text === undefined ? blocks : [{ type: 'text', text }, ...blocks],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: r.usage?.inputTokens ?? countWords(call.system) + countWords(call.prompt),
        output_tokens: r.usage?.outputTokens ?? countWords(JSON.stringify(r.toolCalls)),
      },
    };
  }
  if (text === undefined && json === undefined) {
    if (call.structured) json = { echo: call.prompt };
    else text = `echo: ${call.prompt}`;
  }
  if (text === undefined) text = JSON.stringify(json);
  const length = r.finish === 'length';
  const inputTokens = r.usage?.inputTokens ?? countWords(call.system) + countWords(call.prompt);
  const outputTokens = r.usage?.outputTokens ?? countWords(text);
  const model = call.model ?? 'unknown';

  switch (provider) {
    case 'anthropic': {
      const asTool = call.structured === 'anthropic-tool' && r.text === undefined;
      return {
        id: `msg_fake${n}`,
        type: 'message',
        role: 'assistant',
        model,
        content: asTool
          ? [{ type: 'tool_use', id: `toolu_fake${n}`, name: 'json', input: json }]
          : [{ type: 'text', text }],
        stop_reason: length ? 'max_tokens' : asTool ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: outputTokens },
      };
    }
    case 'openai':
      return {
        id: `chatcmpl-fake${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason: length ? 'length' : 'stop',
          },
        ],
        usage: {
          prompt_tokens: inputTokens,
          completion_tokens: outputTokens,
          total_tokens: inputTokens + outputTokens,
        },
      };
    case 'google':
      return {
        candidates: [
          {
            content: { role: 'model', parts: [{ text }] },
            finishReason: length ? 'MAX_TOKENS' : 'STOP',
            index: 0,
          },
        ],
        usageMetadata: {
          promptTokenCount: inputTokens,
          candidatesTokenCount: outputTokens,
          totalTokenCount: inputTokens + outputTokens,
        },
        modelVersion: model,
        responseId: `fake${n}`,
      };
    case 'ollama':
      return {
        model,
        created_at: new Date().toISOString(),
        message: { role: 'assistant', content: text },
        done: true,
        done_reason: length ? 'length' : 'stop',
        total_duration: 1000,
        load_duration: 10,
        prompt_eval_count: inputTokens,
        prompt_eval_duration: 100,
        eval_count: outputTokens,
        eval_duration: 100,
      };
  }
}

/** Each vendor's error body. */
function errorBody(provider: FakeProvider, status: number, text?: string): unknown {
  const message = text ?? `fake ${provider} error ${status}`;
  switch (provider) {
    case 'anthropic':
      return {
        type: 'error',
        error: {
          type:
            status === 401
              ? 'authentication_error'
              : status === 429
                ? 'rate_limit_error'
                : status === 529
                  ? 'overloaded_error'
                  : 'api_error',
          message,
        },
      };
    case 'openai':
      return {
        error: {
          message,
          type:
            status === 401
              ? 'invalid_request_error'
              : status === 429
                ? 'rate_limit_exceeded'
                : 'server_error',
          param: null,
          code: status === 401 ? 'invalid_api_key' : null,
        },
      };
    case 'google':
      return {
        error: {
          code: status,
          message,
          status: status === 401 ? 'UNAUTHENTICATED' : status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL',
        },
      };
    case 'ollama':
      return { error: message };
  }
}

/**
 * A streamed answer in the vendor's own server-sent events (what the AI SDK's providers read):
 * OpenAI's `chat.completion.chunk` data lines ending in `[DONE]` (usage in a last chunk, as with
 * `stream_options.include_usage`), or Anthropic's message_start, content_block_delta, message_delta
 * and message_stop events.
 */
async function streamAnswer(
  provider: 'openai' | 'anthropic',
  res: ServerResponse,
  call: FakeLlmCall,
  r: FakeLlmResponse,
  n: number,
): Promise<void> {
  const text = r.text ?? `echo: ${call.prompt}`;
  const pieces = r.chunks ?? text.split(/(?<=\s)/);
  const inputTokens = r.usage?.inputTokens ?? countWords(call.system) + countWords(call.prompt);
  const outputTokens = r.usage?.outputTokens ?? countWords(text);
  const model = call.model ?? 'unknown';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string | undefined, data: unknown) =>
    res.write(
      `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    );
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    send(undefined, {
      id: `chatcmpl-fake${n}`,
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  if (provider === 'openai') chunk({ role: 'assistant', content: '' }, null);
  else {
    send('message_start', {
      type: 'message_start',
      message: {
        id: `msg_fake${n}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 0 },
      },
    });
    send('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
  }
  for (const [i, piece] of pieces.entries()) {
    if (r.streamError && i >= r.streamError.afterChunks) {
      const error = { type: r.streamError.type, message: r.streamError.message };
      if (provider === 'openai') send(undefined, { error: { ...error, param: null, code: null } });
      else send('error', { type: 'error', error });
      res.end();
      return;
    }
    if (r.failAfterChunks !== undefined && i >= r.failAfterChunks) {
      // What was written goes out first; then the connection is cut without the stream's end.
      await new Promise((resolve) => setTimeout(resolve, 50));
      res.destroy();
      return;
    }
    if (r.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, r.chunkDelayMs));
    if (res.destroyed) return;
    const taken =
      provider === 'openai'
        ? chunk({ content: piece }, null)
        : send('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: piece },
          });
    if (!taken) {
      // The platform is not reading: wait until it does (or hangs up), as a vendor's server does.
      call.pausedWrites++;
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
      if (res.destroyed) return;
    }
  }
  const finish = r.finish === 'length';
  if (provider === 'openai') {
    chunk({}, finish ? 'length' : 'stop');
    send(undefined, {
      id: `chatcmpl-fake${n}`,
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [],
      usage: {
        prompt_tokens: inputTokens,
        completion_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
    });
    send(undefined, '[DONE]');
  } else {
    send('content_block_stop', { type: 'content_block_stop', index: 0 });
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: finish ? 'max_tokens' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: outputTokens },
    });
    send('message_stop', { type: 'message_stop' });
  }
  res.end();
}
