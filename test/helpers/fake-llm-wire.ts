// biome-ignore-all lint/suspicious/noExplicitAny: vendor wire bodies are loosely shaped JSON, read defensively.
/**
 * The four vendors' wire formats as the fake providers speak them (fake-llm-providers.ts): what a
 * request says (model, system, prompt, schema, tools), and a scripted response written as each
 * vendor writes it: an answer, an error body, or (OpenAI, Anthropic) a stream of events.
 */
import type { ServerResponse } from 'node:http';
import type { FakeLlmCall, FakeLlmResponse, FakeProvider, FakeToolResult } from './fake-llm-providers.ts';

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

export function describeRequest(provider: FakeProvider, body: any, match: RegExpMatchArray): Described {
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

export function answer(provider: FakeProvider, call: FakeLlmCall, r: FakeLlmResponse, n: number): unknown {
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
export function errorBody(provider: FakeProvider, status: number, text?: string): unknown {
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
export async function streamAnswer(
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
