/**
 * The platform's own prompt calls against the AI SDK's (as direct-prompt-call.test.ts): for every
 * kind of vendor answer (well-formed, refused, truncated, tool calls, malformed, errors) and every
 * provider, the platform's reader gives the result or the error the SDK gives for the same bytes.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { AiSdkGateway } from '../../functions/adapters/llm/ai-sdk-gateway.ts';
import { readPromptAnswer } from '../../functions/adapters/llm/prompt-answer-readers.ts';
import type { LlmProviderId } from '../../functions/ports/llm-gateway.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import { MODELS, outcome, request, SCHEMA, startGatewayPair } from '../helpers/prompt-gateways.ts';

let fake: FakeLlmProviders;
let direct: AiSdkGateway;
let reference: AiSdkGateway;
let counts: { send: number; fetch: number };

before(async () => {
  ({ fake, direct, reference, counts } = await startGatewayPair());
});

after(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  counts.send = 0;
  counts.fetch = 0;
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
