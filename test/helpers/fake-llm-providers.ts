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
 * sent back, and `tools` names the tools it offered. The wire formats are in fake-llm-wire.ts.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, describeRequest, errorBody, streamAnswer } from './fake-llm-wire.ts';

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
      ...describeRequest(route.provider, body, route.match),
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
