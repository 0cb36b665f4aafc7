/**
 * The platform's own prompt calls (functions/adapters/llm/ai-sdk-gateway.ts `generate`, with
 * prompt-request-templates.ts and prompt-answer-readers.ts) against the AI SDK's provider doing the
 * whole call (`promptCalls: 'sdk'`, what every prompt call was before): for every provider, model
 * family and shape, the bytes sent to the vendor must be the same, and for every kind of vendor
 * answer (well-formed, refused, truncated, tool calls, malformed, errors) the result or the error
 * must be the same. Also that the platform's path is the one taken where it should be: otherwise
 * the comparison would compare the SDK with itself.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AiSdkGateway, type LlmProvidersConfig } from '../../functions/adapters/llm/ai-sdk-gateway.ts';
import type { ModelTransport } from '../../functions/adapters/llm/model-transport.ts';
import { createPooledFetch, createPooledTransport } from '../../functions/adapters/llm/pooled-fetch.ts';
import { readPromptAnswer } from '../../functions/adapters/llm/prompt-answer-readers.ts';
import {
  fillTemplate,
  PromptRequestTemplates,
} from '../../functions/adapters/llm/prompt-request-templates.ts';
import type { LlmProviderId, LlmRequest, LlmResult } from '../../functions/ports/llm-gateway.ts';
import { type FakeLlmProviders, start } from '../helpers/fake-llm-providers.ts';

const KEYS: Record<LlmProviderId, string | undefined> = {
  anthropic: 'sk-ant-api03-FAKEKEYanthropic0123456789',
  openai: 'sk-proj-FAKEKEYopenai0123456789',
  google: 'AIzaFAKEKEYgoogle0123456789abcdef',
  ollama: undefined,
};

/** Model ids of each family whose requests the SDK builds differently (roles, limits, modes). */
const MODELS: Record<LlmProviderId, string[]> = {
  openai: ['gpt-5-mini', 'gpt-4o', 'gpt-5-chat-latest', 'o3', 'gpt-4.1-nano', 'my-fine-tune'],
  anthropic: [
    'claude-sonnet-4-5',
    'claude-3-haiku-20240307',
    'claude-opus-4-1',
    'claude-sonnet-4-6',
    'unknown-model',
  ],
  google: ['gemini-2.5-flash', 'gemini-2.0-flash', 'gemma-3-27b-it'],
  ollama: ['llama3.2', 'qwen3:8b'],
};

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
  required: ['answer', 'confidence'],
  additionalProperties: false,
};
/** A schema Anthropic's native structured output cannot hold (the SDK uses a json tool). */
const OPEN_SCHEMA = { type: 'object', properties: { data: { type: 'object' } }, required: ['data'] };

/** Texts that JSON escapes in every way, and one that looks like a template's placeholder. */
const TEXTS = [
  'Say hello to the tests',
  'Quotes " and \\ backslashes,\nnew lines\tand tabs, </script>, \u2028\u2029, emoji 🦓, nul \u0000 and "agenthost-template-prompt-x"',
];

let fake: FakeLlmProviders;
let direct: AiSdkGateway;
let reference: AiSdkGateway;
const counts = { send: 0, fetch: 0 };

function config(): LlmProvidersConfig {
  const llm = {} as LlmProvidersConfig;
  for (const p of Object.keys(MODELS) as LlmProviderId[])
    llm[p] = { apiKey: KEYS[p], baseUrl: fake.baseUrls[p], defaultModel: undefined };
  return llm;
}

function request(provider: LlmProviderId, model: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  return {
    provider,
    model,
    system: 'You are terse.',
    prompt: TEXTS[0]!,
    signal: new AbortController().signal,
    ...extra,
  };
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** A result with its id's number left out (the fake numbers each answer it gives). */
function withoutNumber(result: LlmResult): LlmResult {
  return { ...result, responseId: result.responseId?.replace(/\d+$/, '<n>') };
}

/** The result or the error of a call, in a form to compare. */
async function outcome(gateway: AiSdkGateway, req: LlmRequest): Promise<unknown> {
  try {
    return { result: await gateway.generate(req) };
  } catch (error) {
    const e = error as Error & { status?: number; provider?: string };
    return { error: { name: e.name, message: e.message, status: e.status, provider: e.provider } };
  }
}

before(async () => {
  fake = await start();
  const pooled = createPooledTransport();
  const send: ModelTransport = (url, init) => {
    counts.send++;
    return pooled(url, init);
  };
  const pooledFetch = createPooledFetch(pooled);
  const fetch: typeof globalThis.fetch = (input, init) => {
    counts.fetch++;
    return pooledFetch(input, init);
  };
  direct = new AiSdkGateway(config(), { fetch, send });
  reference = new AiSdkGateway(config(), { fetch, send, promptCalls: 'sdk' });
});

after(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  counts.send = 0;
  counts.fetch = 0;
});

describe('prompt calls: the platform sends what the SDK sends', () => {
  for (const provider of Object.keys(MODELS) as LlmProviderId[])
    it(`${provider}: the same bytes, path and headers for every model and shape`, async () => {
      let shapes = 0;
      let sentDirect = 0;
      for (const model of MODELS[provider])
        for (const system of ['You are terse.', undefined])
          for (const outputSchema of [undefined, SCHEMA, OPEN_SCHEMA])
            for (const maxOutputTokens of [undefined, 64])
              for (const prompt of TEXTS) {
                const req = request(provider, model, { system, outputSchema, maxOutputTokens, prompt });
                const label = JSON.stringify({
                  model,
                  system,
                  schema: !!outputSchema,
                  maxOutputTokens,
                  prompt,
                });
                fake.reset();
                counts.send = 0;
                counts.fetch = 0;
                const mine = await direct.generate(req);
                const theirs = await reference.generate(req);
                // The fake numbers its answers' ids (`chatcmpl-fake<n>`): each read from its own answer.
                assert.ok(!mine.responseId || /fake\d+$/.test(mine.responseId), mine.responseId);
                assert.deepEqual(withoutNumber(mine), withoutNumber(theirs), label);
                assert.equal(fake.calls.length, 2, label);
                const [a, b] = fake.calls as [(typeof fake.calls)[0], (typeof fake.calls)[0]];
                assert.equal(a.path, b.path, label);
                assert.equal(a.rawRequest, b.rawRequest, label);
                assert.deepEqual(a.headers, b.headers, label);
                // The reference always goes through the SDK's fetch; the platform's own call goes
                // through `send`, except for a shape that asks the model for a tool or whose texts
                // the SDK does not send as they are (Gemma takes no system instructions: the SDK
                // puts them in the user message).
                const asksForTool = b.body && 'tools' in b.body;
                const textsAsIs =
                  occurrences(b.rawRequest, JSON.stringify(prompt)) === 1 &&
                  (system === undefined || occurrences(b.rawRequest, JSON.stringify(system)) === 1);
                const viaPlatform = !asksForTool && textsAsIs;
                assert.deepEqual(
                  counts,
                  viaPlatform ? { send: 1, fetch: 1 } : { send: 0, fetch: 2 },
                  `${label}: ${viaPlatform ? 'sent by the platform' : 'sent by the SDK'}`,
                );
                shapes++;
                if (viaPlatform) sentDirect++;
              }
      // Most shapes go the platform's way: all but Anthropic's json tool (structured output on
      // models without the native mode, and schemas the native mode cannot hold) and Gemma's
      // system instructions.
      const share = { openai: 1, ollama: 1, google: 0.8, anthropic: 0.5 }[provider];
      assert.ok(sentDirect >= shapes * share, `${sentDirect} of ${shapes} sent directly`);
    });
});

interface AnswerCase {
  name: string;
  status?: number;
  /** The body: JSON (stringified) or text as is. */
  body: unknown;
  /** Whether the platform's reader reads it (else the SDK reads the same bytes). */
  read: boolean;
  schema?: boolean;
}

const ANSWERS: Record<LlmProviderId, AnswerCase[]> = {
  openai: [
    {
      name: 'a plain answer',
      read: true,
      body: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-5-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      },
    },
    {
      name: 'cached and reasoning tokens',
      read: true,
      body: {
        choices: [
          { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, finish_reason: 'stop' },
        ],
        usage: {
          prompt_tokens: 50,
          completion_tokens: 20,
          prompt_tokens_details: { cached_tokens: 40 },
          completion_tokens_details: { reasoning_tokens: 15 },
        },
      },
    },
    {
      name: 'truncated, no content',
      read: true,
      body: {
        choices: [{ index: 0, message: { content: null }, finish_reason: 'length' }],
        usage: { prompt_tokens: 3 },
      },
    },
    {
      name: 'content filter',
      read: true,
      body: { choices: [{ index: 0, message: { content: '' }, finish_reason: 'content_filter' }] },
    },
    {
      name: 'an unknown finish reason',
      read: true,
      body: { choices: [{ index: 0, message: { content: 'x' }, finish_reason: 'weird' }] },
    },
    {
      name: 'structured',
      read: true,
      schema: true,
      body: {
        choices: [{ index: 0, message: { content: '{"answer":"a","confidence":1}' }, finish_reason: 'stop' }],
      },
    },
    {
      name: 'a choice without its index',
      read: false,
      body: { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] },
    },
    {
      name: 'two choices',
      read: false,
      body: {
        choices: [
          { index: 0, message: { content: 'x' }, finish_reason: 'stop' },
          { index: 1, message: { content: 'y' }, finish_reason: 'stop' },
        ],
      },
    },
    {
      name: 'another role',
      read: false,
      body: { choices: [{ index: 0, message: { role: 'user', content: 'x' }, finish_reason: 'stop' }] },
    },
    {
      name: 'a refusal',
      read: false,
      body: { choices: [{ message: { content: null, refusal: 'I cannot help' }, finish_reason: 'stop' }] },
    },
    {
      name: 'tool calls',
      read: false,
      body: {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
    },
    { name: 'no choices', read: false, body: { choices: [] } },
    {
      name: 'content of the wrong type',
      read: false,
      body: { choices: [{ message: { content: 42 }, finish_reason: 'stop' }] },
    },
    {
      name: 'a created time that is not a number',
      read: false,
      body: {
        created: 'yesterday',
        choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }],
      },
    },
    {
      name: 'an annotation',
      read: false,
      body: {
        choices: [
          { index: 0, message: { content: 'hi', annotations: [{ type: 'file' }] }, finish_reason: 'stop' },
        ],
      },
    },
    {
      name: 'an escaped __proto__ key',
      read: false,
      body: '{"\\u005f_proto__":{},"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}',
    },
    {
      name: 'a __proto__ key',
      read: false,
      body: '{"choices":[{"index":0,"message":{"content":"x","__proto__":{"a":1}},"finish_reason":"stop"}]}',
    },
    { name: 'not JSON', read: false, body: 'upstream said no' },
    { name: 'an empty body', read: false, body: '' },
    {
      name: 'HTTP 400',
      status: 400,
      read: false,
      body: { error: { message: 'bad request', type: 'invalid_request_error' } },
    },
    { name: 'HTTP 503, not JSON', status: 503, read: false, body: 'upstream down' },
    { name: 'an error in a 200', read: false, body: { error: { message: 'odd' } } },
  ],
  anthropic: [
    {
      name: 'a plain answer',
      read: true,
      body: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'Hi' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 3 },
      },
    },
    {
      name: 'thinking, two text parts and cache tokens',
      read: true,
      body: {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'text', text: 'Hello ' },
          { type: 'redacted_thinking', data: 'zzz' },
          { type: 'text', text: 'there' },
        ],
        stop_reason: 'stop_sequence',
        stop_sequence: 'END',
        usage: {
          input_tokens: 10,
          output_tokens: 3,
          cache_creation_input_tokens: 5,
          cache_read_input_tokens: 7,
        },
      },
    },
    {
      name: 'max tokens',
      read: true,
      body: {
        id: 'msg_3',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'text', text: 'The beginning' }],
        stop_reason: 'max_tokens',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 5 },
      },
    },
    {
      name: 'a refusal',
      read: true,
      body: {
        id: 'msg_4',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [],
        stop_reason: 'refusal',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 0 },
      },
    },
    {
      name: 'a tool use',
      read: false,
      body: {
        id: 'msg_5',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    },
    {
      name: 'usage by iterations',
      read: false,
      body: {
        id: 'msg_6',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'text', text: 'x' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 1,
          output_tokens: 1,
          iterations: [{ type: 'message', input_tokens: 4, output_tokens: 2 }],
        },
      },
    },
    {
      name: 'no type',
      read: false,
      body: {
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    },
    {
      name: 'thinking without its signature',
      read: false,
      body: {
        type: 'message',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'hi' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    },
    {
      name: 'no usage',
      read: false,
      body: { id: 'msg_7', type: 'message', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn' },
    },
    {
      name: 'overloaded',
      status: 529,
      read: false,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    },
  ],
  google: [
    {
      name: 'a plain answer',
      read: true,
      body: {
        candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
    },
    {
      name: 'thoughts',
      read: true,
      body: {
        candidates: [
          {
            content: {
              parts: [
                { text: 'thinking…', thought: true },
                { text: 'Answer', thoughtSignature: 'sig' },
              ],
              role: 'model',
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: {
          promptTokenCount: 4,
          candidatesTokenCount: 2,
          thoughtsTokenCount: 9,
          toolUsePromptTokenCount: 1,
        },
      },
    },
    { name: 'safety, no content', read: true, body: { candidates: [{ finishReason: 'SAFETY' }] } },
    {
      name: 'max tokens',
      read: true,
      body: { candidates: [{ content: { parts: [{ text: 'The beg' }] }, finishReason: 'MAX_TOKENS' }] },
    },
    {
      name: 'a function call',
      read: false,
      body: {
        candidates: [
          { content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' },
        ],
      },
    },
    {
      name: 'a thought flag that is not a boolean',
      read: false,
      body: { candidates: [{ content: { parts: [{ text: 'hi', thought: 'yes' }] }, finishReason: 'STOP' }] },
    },
    {
      name: 'a count that is a string',
      read: false,
      body: {
        candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 1, cachedContentTokenCount: '3' },
      },
    },
    { name: 'a blocked prompt', read: false, body: { promptFeedback: { blockReason: 'SAFETY' } } },
    {
      name: 'HTTP 429',
      status: 429,
      read: false,
      body: { error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED' } },
    },
  ],
  ollama: [
    {
      name: 'a plain answer',
      read: true,
      body: {
        model: 'llama3.2',
        created_at: '2026-11-24T00:00:00Z',
        message: { role: 'assistant', content: 'Hi' },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 5,
        eval_count: 2,
      },
    },
    {
      name: 'thinking, no counts',
      read: true,
      body: {
        model: 'qwen3',
        created_at: '2026-11-24T00:00:00Z',
        message: { role: 'assistant', content: 'Hi', thinking: 'hmm' },
        done: true,
        done_reason: 'length',
      },
    },
    {
      name: 'tool calls',
      read: false,
      body: {
        model: 'llama3.2',
        created_at: '2026-11-24T00:00:00Z',
        message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: {} } }] },
        done: true,
        done_reason: 'stop',
      },
    },
    {
      name: 'thinking that is null',
      read: false,
      body: {
        model: 'llama3.2',
        created_at: '2026-11-24T00:00:00Z',
        message: { role: 'assistant', content: 'hi', thinking: null },
        done: true,
      },
    },
    {
      name: 'no model',
      read: false,
      body: { created_at: 'x', message: { role: 'assistant', content: 'Hi' }, done: true },
    },
    {
      name: 'HTTP 404',
      status: 404,
      read: false,
      body: { error: 'model "x" not found, try pulling it first' },
    },
  ],
};

describe('prompt calls: the platform reads answers as the SDK reads them', () => {
  for (const provider of Object.keys(ANSWERS) as LlmProviderId[])
    for (const c of ANSWERS[provider]!)
      it(`${provider}: ${c.name} (${c.read ? "the platform's reader" : 'read by the SDK'})`, async () => {
        const text = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
        if (!c.status || c.status < 300) {
          const read = readPromptAnswer(provider, Buffer.from(text), MODELS[provider]![0]!);
          assert.equal(read !== undefined, c.read, 'the reader reads what it should, and only that');
        }
        const req = request(provider, MODELS[provider]![0]!, c.schema ? { outputSchema: SCHEMA } : {});
        const answer = { status: c.status ?? 200, rawText: text };
        fake.enqueue(answer);
        const mine = await outcome(direct, req);
        fake.enqueue(answer);
        const theirs = await outcome(reference, req);
        assert.deepEqual(mine, theirs);
        assert.equal(fake.calls.length, 2, 'one request each: a replayed answer is not sent again');
      });

  it('google: a continued answer is continued by the SDK, as it would have been', async () => {
    const req = request('google', 'gemini-2.5-flash');
    const first = {
      rawText: JSON.stringify({
        candidates: [
          {
            content: { parts: [{ text: 'part one, ' }] },
            finishReason: 'CONTINUATION',
            continuationToken: 'tok',
          },
        ],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3 },
      }),
    };
    const second = {
      rawText: JSON.stringify({
        candidates: [{ content: { parts: [{ text: 'part two' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 },
      }),
    };
    fake.enqueue(first, second);
    const mine = await outcome(direct, req);
    fake.enqueue(first, second);
    const theirs = await outcome(reference, req);
    assert.deepEqual(mine, theirs);
    assert.equal((mine as { result: { text: string } }).result.text, 'part one, part two');
    assert.equal(fake.calls.length, 4);
    assert.equal(fake.calls[1]!.body.continuationToken, 'tok', 'the continuation went to the vendor');
  });
});

describe('prompt request templates: bounded, and the texts never part of one', () => {
  /** A capture that builds an OpenAI-like body and counts its builds. */
  function templates() {
    const built: string[] = [];
    const t = new PromptRequestTemplates(async (req) => {
      built.push(req.model);
      return {
        url: 'http://127.0.0.1:1/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: req.model,
          messages: [
            ...(req.system === undefined ? [] : [{ role: 'system', content: req.system }]),
            { role: 'user', content: req.prompt },
          ],
          ...(req.outputSchema ? { response_format: req.outputSchema } : {}),
        }),
      };
    });
    return { t, built };
  }

  it('keeps at most 1,000 shapes, the oldest forgotten first', async () => {
    const { t, built } = templates();
    for (let i = 0; i <= 1000; i++) await t.get(request('openai', `m${i}`));
    assert.equal(built.length, 1001);
    await t.get(request('openai', 'm1000'));
    assert.equal(built.length, 1001, 'a recent shape is kept');
    await t.get(request('openai', 'm0'));
    assert.equal(built.length, 1002, 'the oldest shape was forgotten and is built again');
  });

  it("keeps at most 8 MB of templates: a tenant's large schemas cannot grow it without bound", async () => {
    const { t, built } = templates();
    const big = (n: number) => ({ type: 'object', description: `${n}`.padEnd(1024 * 1024, 'x') });
    const schemas = Array.from({ length: 10 }, (_, i) => big(i));
    for (const outputSchema of schemas) await t.get(request('openai', 'gpt-4o', { outputSchema }));
    assert.equal(built.length, 10);
    await t.get(request('openai', 'gpt-4o', { outputSchema: schemas[9] }));
    assert.equal(built.length, 10, 'the newest is kept');
    await t.get(request('openai', 'gpt-4o', { outputSchema: schemas[0] }));
    assert.equal(built.length, 11, 'the oldest was forgotten (each is 2 MB with its key)');
  });

  it("writes each call's texts into the template and keeps none of them", async () => {
    const { t } = templates();
    const first = await t.get(request('openai', 'gpt-4o', { system: 'tenant A secret', prompt: 'prompt A' }));
    const second = await t.get(
      request('openai', 'gpt-4o', { system: 'tenant B', prompt: '"}],"model":"evil' }),
    );
    assert.equal(first, second, 'one template for the shape');
    assert.ok(first);
    assert.ok(!JSON.stringify(first).includes('tenant A') && !JSON.stringify(first).includes('prompt A'));
    const body = JSON.parse(
      fillTemplate(first, request('openai', 'gpt-4o', { system: 'tenant B', prompt: '"}],"model":"evil' })),
    );
    assert.deepEqual(body, {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'tenant B' },
        { role: 'user', content: '"}],"model":"evil' },
      ],
    });
  });
});

describe('prompt calls: an answer whose body breaks off', () => {
  for (const via of ['global fetch', 'pooled'] as const)
    it(`keeps the answer's status, as the SDK does (${via})`, async () => {
      // Headers of a 500, half a body, then the connection is cut.
      const server = createServer((_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': '200' });
        res.write('{"error":{"message":"half');
        setTimeout(() => res.destroy(), 20);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const llm = config();
        llm.openai = { apiKey: KEYS.openai, baseUrl: `http://127.0.0.1:${port}/v1`, defaultModel: undefined };
        const options = () => {
          if (via === 'global fetch') return {};
          const send = createPooledTransport();
          return { fetch: createPooledFetch(send), send };
        };
        const req = request('openai', 'gpt-4o');
        const mine = await outcome(new AiSdkGateway(llm, options()), req);
        const theirs = await outcome(new AiSdkGateway(llm, { ...options(), promptCalls: 'sdk' }), req);
        assert.deepEqual(mine, theirs);
        assert.equal((mine as { error: { status?: number } }).error.status, 500);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
});
