import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AiSdkGateway, type LlmProvidersConfig } from '../../functions/adapters/llm/ai-sdk-gateway.ts';
import { createPooledFetch, createPooledTransport } from '../../functions/adapters/llm/pooled-fetch.ts';
import { ollamaApiUrl } from '../../functions/adapters/llm/provider-models.ts';
import {
  LlmAbortedError,
  LlmError,
  type LlmModelCall,
  LlmNotConfiguredError,
  type LlmProviderId,
  type LlmRequest,
} from '../../functions/ports/llm-gateway.ts';
import { type FakeLlmCall, type FakeLlmProviders, start } from '../helpers/fake-llm-providers.ts';

const PROVIDERS = ['anthropic', 'openai', 'google', 'ollama'] as const;

const KEYS: Record<LlmProviderId, string | undefined> = {
  anthropic: 'sk-ant-api03-FAKEKEYanthropic0123456789',
  openai: 'sk-proj-FAKEKEYopenai0123456789',
  google: 'AIzaFAKEKEYgoogle0123456789abcdef',
  ollama: undefined,
};

const MODELS: Record<LlmProviderId, string> = {
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-5-mini',
  google: 'gemini-2.5-flash',
  ollama: 'llama3.2',
};

/** Each vendor's own finish reason for a finished answer, before the AI SDK unifies it. */
const RAW_STOP: Record<LlmProviderId, string> = {
  anthropic: 'end_turn',
  openai: 'stop',
  google: 'STOP',
  ollama: 'stop',
};
/** The ids the fake gives its answers (Ollama's have none). */
const RESPONSE_ID: Record<LlmProviderId, RegExp> = {
  anthropic: /^msg_fake\d+$/,
  openai: /^chatcmpl-fake\d+$/,
  google: /^fake\d+$/,
  ollama: /^undefined$/,
};

const ENV_NAMES: Record<LlmProviderId, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
  ollama: 'OLLAMA_BASE_URL',
};

const SECRET_PROMPT = 'the secret prompt about project zebra';

/** The error type each vendor's error body names for a status (the fake's bodies; Ollama's has none). */
const VENDOR_ERROR_TYPES: Record<LlmProviderId, Record<number, string | undefined>> = {
  anthropic: { 500: 'api_error', 429: 'rate_limit_error', 401: 'authentication_error' },
  openai: { 500: 'server_error', 429: 'rate_limit_exceeded', 401: 'invalid_request_error' },
  google: { 500: 'INTERNAL', 429: 'RESOURCE_EXHAUSTED', 401: 'UNAUTHENTICATED' },
  ollama: {},
};

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
  required: ['answer', 'confidence'],
  additionalProperties: false,
};

let fake: FakeLlmProviders;
let gateway: AiSdkGateway;
let pooledGateway: AiSdkGateway;

function configFor(f: FakeLlmProviders): LlmProvidersConfig {
  const llm = {} as LlmProvidersConfig;
  for (const p of PROVIDERS) llm[p] = { apiKey: KEYS[p], baseUrl: f.baseUrls[p], defaultModel: undefined };
  return llm;
}

function request(provider: LlmProviderId, extra: Partial<LlmRequest> = {}): LlmRequest {
  return {
    provider,
    model: MODELS[provider],
    system: 'You are terse.',
    prompt: 'Say hello to the tests',
    maxOutputTokens: 64,
    signal: new AbortController().signal,
    ...extra,
  };
}

function lastCall(): FakeLlmCall {
  const call = fake.calls.at(-1);
  assert.ok(call, 'the fake received a request');
  return call;
}

function assertAuth(provider: LlmProviderId, call: FakeLlmCall): void {
  const key = KEYS[provider];
  switch (provider) {
    case 'anthropic':
      assert.equal(call.headers['x-api-key'], key);
      assert.equal(call.headers['anthropic-version'], '2023-06-01');
      break;
    case 'openai':
      assert.equal(call.headers.authorization, `Bearer ${key}`);
      break;
    case 'google':
      assert.equal(call.headers['x-goog-api-key'], key);
      break;
    case 'ollama':
      assert.equal(call.headers.authorization, undefined);
      break;
  }
}

function assertClean(provider: LlmProviderId, message: string): void {
  const key = KEYS[provider];
  if (key) assert.ok(!message.includes(key), `message leaks the key: ${message}`);
  assert.ok(!message.includes(SECRET_PROMPT), `message leaks the prompt: ${message}`);
  assert.ok(!message.includes('zebra'), `message leaks the prompt: ${message}`);
}

before(async () => {
  fake = await start();
  gateway = new AiSdkGateway(configFor(fake));
  const send = createPooledTransport();
  pooledGateway = new AiSdkGateway(configFor(fake), { fetch: createPooledFetch(send), send });
});

after(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

// Each provider through both fetches the platform uses: the global fetch (in AWS) and undici's
// pooled request API (locally: adapters/llm/pooled-fetch.ts), which must behave the same.
for (const via of ['global fetch', 'pooled fetch'] as const)
  for (const provider of PROVIDERS) {
    const gw = () => (via === 'global fetch' ? gateway : pooledGateway);
    describe(`AiSdkGateway: ${provider} (${via})`, () => {
      it('round-trips plain text with finish reason, usage, auth, model, system and prompt', async () => {
        const result = await gw().generate(request(provider));
        assert.equal(result.text, 'echo: Say hello to the tests');
        assert.equal(result.object, undefined);
        assert.equal(result.finishReason, 'stop');
        // The fake counts words: system (3) + prompt (5) in, "echo: Say hello to the tests" (6) out.
        assert.deepEqual(result.usage, { inputTokens: 8, outputTokens: 6, totalTokens: 14 });

        assert.equal(fake.calls.length, 1);
        const call = lastCall();
        assert.equal(call.provider, provider);
        assert.equal(call.model, MODELS[provider]);
        assert.equal(call.system, 'You are terse.');
        assert.equal(call.prompt, 'Say hello to the tests');
        assert.equal(call.maxTokens, 64);
        assert.equal(call.structured, undefined);
        assertAuth(provider, call);
        // What the answer says of itself, as the provider reads it (the model request's span).
        assert.equal(result.rawFinishReason, RAW_STOP[provider]);
        assert.match(String(result.responseId), RESPONSE_ID[provider]);
        assert.equal(result.responseModel, provider === 'google' ? undefined : MODELS[provider]);
      });

      it('reports explicit usage from the provider', async () => {
        fake.enqueue({ text: 'hi', usage: { inputTokens: 120, outputTokens: 7 } });
        const result = await gw().generate(request(provider));
        assert.equal(result.text, 'hi');
        assert.deepEqual(result.usage, { inputTokens: 120, outputTokens: 7, totalTokens: 127 });
      });

      it('maps truncation to finishReason length', async () => {
        fake.enqueue({ text: 'The beginning of a long', finish: 'length' });
        const result = await gw().generate(request(provider, { maxOutputTokens: 5 }));
        assert.equal(result.text, 'The beginning of a long');
        assert.equal(result.finishReason, 'length');
        assert.equal(lastCall().maxTokens, 5);
      });

      it('returns the parsed object for structured output', async () => {
        fake.setResponder((call) =>
          call.schema ? { json: { answer: 'forty-two', confidence: 0.9 } } : undefined,
        );
        const result = await gw().generate(request(provider, { outputSchema: SCHEMA }));
        assert.deepEqual(result.object, { answer: 'forty-two', confidence: 0.9 });
        assert.deepEqual(JSON.parse(result.text), { answer: 'forty-two', confidence: 0.9 });
        assert.equal(result.finishReason, 'stop');
        const call = lastCall();
        assert.ok(call.structured, 'the request asked for structured output');
        assert.deepEqual((call.schema as { required: unknown }).required, ['answer', 'confidence']);
      });

      it('does not validate the object against the schema (the platform does)', async () => {
        fake.enqueue({ json: { unexpected: true } });
        const result = await gw().generate(request(provider, { outputSchema: SCHEMA }));
        assert.deepEqual(result.object, { unexpected: true });
      });

      it('returns the text without an object when the structured answer is not JSON', async () => {
        fake.enqueue({ text: 'Sorry, I cannot produce JSON today.' });
        const result = await gw().generate(request(provider, { outputSchema: SCHEMA }));
        assert.equal(result.object, undefined);
        assert.equal(result.text, 'Sorry, I cannot produce JSON today.');
        assert.equal(result.finishReason, 'stop');
      });

      for (const status of [500, 429, 401]) {
        it(`maps HTTP ${status} to LlmError with the status and vendor's type, its words apart`, async () => {
          // A provider error that quotes the key and a piece of the prompt: the message says only
          // the status and the vendor's error type; the vendor's words (for the agent's log) keep
          // the piece of prompt but lose the key.
          fake.enqueue({
            status,
            errorMessage: `Incorrect API key provided: ${KEYS[provider] ?? 'none'}; near "secret   prompt about project zebra"`,
          });
          await assert.rejects(gw().generate(request(provider, { prompt: SECRET_PROMPT })), (error) => {
            assert.ok(error instanceof LlmError, `expected LlmError, got ${String(error)}`);
            assert.equal(error.provider, provider);
            assert.equal(error.kind, 'http_status');
            assert.equal(error.status, status);
            assert.equal(error.providerErrorType, VENDOR_ERROR_TYPES[provider][status]);
            assert.match(error.message, new RegExp(`HTTP ${status}`));
            assertClean(provider, error.message);
            assert.match(error.providerText ?? '', /near "secret prompt about project zebra"/);
            const key = KEYS[provider];
            if (key) assert.ok(!error.providerText?.includes(key), `the vendor's words keep the key`);
            return true;
          });
          assert.equal(fake.calls.length, 1, 'no retries');
        });
      }

      it('aborts promptly while the provider delays, and the fake sees the disconnect', async () => {
        let arrived!: () => void;
        const arrival = new Promise<void>((resolve) => {
          arrived = resolve;
        });
        fake.setResponder(() => {
          arrived();
          return { text: 'too late', delayMs: 10_000 };
        });
        const controller = new AbortController();
        const pending = gw().generate(request(provider, { signal: controller.signal }));
        await arrival;
        const abortedAt = Date.now();
        controller.abort();
        await assert.rejects(pending, LlmAbortedError);
        assert.ok(Date.now() - abortedAt < 1_000, 'the abort was prompt');
        assert.equal(await lastCall().settled, 'disconnected');
      });

      it('maps a timeout signal to LlmAbortedError', async () => {
        fake.enqueue({ text: 'too late', delayMs: 10_000 });
        await assert.rejects(
          gw().generate(request(provider, { signal: AbortSignal.timeout(50) })),
          LlmAbortedError,
        );
        assert.equal(await lastCall().settled, 'disconnected');
      });

      it('does not call the provider with an already aborted signal', async () => {
        await assert.rejects(
          gw().generate(request(provider, { signal: AbortSignal.abort() })),
          LlmAbortedError,
        );
        assert.equal(fake.calls.length, 0);
      });

      it('throws LlmNotConfiguredError without sending a request when unconfigured', async () => {
        const llm = configFor(fake);
        llm[provider] =
          provider === 'ollama'
            ? { apiKey: undefined, baseUrl: undefined, defaultModel: undefined }
            : { apiKey: undefined, baseUrl: fake.baseUrls[provider], defaultModel: undefined };
        const unconfigured = new AiSdkGateway(llm);
        await assert.rejects(unconfigured.generate(request(provider)), (error) => {
          assert.ok(error instanceof LlmNotConfiguredError);
          assert.equal(
            error.message,
            `The ${provider} provider is not configured: set ${ENV_NAMES[provider]}`,
          );
          return true;
        });
        assert.equal(fake.calls.length, 0);
      });
    });
  }

describe('AiSdkGateway: details', () => {
  it('uses the Anthropic json tool for schemas native structured output cannot hold', async () => {
    const open = { type: 'object', properties: { data: { type: 'object' } }, required: ['data'] };
    fake.enqueue({ json: { data: { anything: [1, 2] } } });
    const result = await gateway.generate(request('anthropic', { outputSchema: open }));
    assert.equal(lastCall().structured, 'anthropic-tool');
    assert.deepEqual(result.object, { data: { anything: [1, 2] } });
    assert.equal(result.finishReason, 'stop');
  });

  it('returns the partial text without an object when structured output is truncated', async () => {
    fake.enqueue({ text: '{"answer": "forty', finish: 'length' });
    const result = await gateway.generate(request('openai', { outputSchema: SCHEMA }));
    assert.equal(result.object, undefined);
    assert.equal(result.text, '{"answer": "forty');
    assert.equal(result.finishReason, 'length');
  });

  it('maps a malformed provider answer to LlmError without quoting it', async () => {
    fake.enqueue({ rawBody: { nonsense: SECRET_PROMPT } });
    await assert.rejects(gateway.generate(request('openai', { prompt: SECRET_PROMPT })), (error) => {
      assert.ok(error instanceof LlmError);
      assert.equal(error.status, undefined);
      assertClean('openai', error.message);
      return true;
    });
  });

  for (const via of ['global fetch', 'pooled fetch'] as const)
    it(`maps an unreachable provider to LlmError without a status (${via})`, async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const llm = configFor(fake);
      llm.openai = { apiKey: KEYS.openai, baseUrl: `http://127.0.0.1:${port}/v1`, defaultModel: undefined };
      await assert.rejects(
        new AiSdkGateway(
          llm,
          via === 'pooled fetch' ? { fetch: createPooledFetch(), send: createPooledTransport() } : {},
        ).generate(request('openai', { prompt: SECRET_PROMPT })),
        (error) => {
          assert.ok(error instanceof LlmError);
          assert.equal(error.status, undefined);
          assert.equal(error.kind, 'unreachable');
          assertClean('openai', error.message);
          return true;
        },
      );
    });

  for (const provider of ['openai', 'anthropic'] as const)
    it(`reads a streamed answer's own finish reason, id and model (${provider})`, async () => {
      const result = await gateway.generate(request(provider, { onText: () => undefined }));
      assert.equal(lastCall().body.stream, true);
      assert.equal(result.rawFinishReason, RAW_STOP[provider]);
      assert.match(String(result.responseId), RESPONSE_ID[provider]);
      assert.equal(result.responseModel, MODELS[provider]);
    });

  it("reads the vendor's stream no further while the caller has not taken the last piece (backpressure)", async () => {
    const pieces = Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i));
    fake.enqueue({ text: pieces.join(''), chunks: pieces });
    let taken = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first!: () => void;
    const firstTaken = new Promise<void>((resolve) => {
      first = resolve;
    });
    const answer = gateway.generate(
      request('anthropic', {
        // The first piece is not taken until released: a client that stopped reading.
        onText: async () => {
          taken++;
          if (taken === 1) {
            first();
            await held;
          }
        },
      }),
    );
    await firstTaken;
    // Turns of the event loop, not a clock: every piece the fake sent has long been parsed by now.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(taken, 1, 'no piece was handed on while the first was not taken');
    release();
    const result = await answer;
    assert.equal(taken, 26);
    assert.equal(result.text, pieces.join(''));
  });

  it("reports each tool loop turn's own finish reason, id and model", async () => {
    fake.enqueue({ toolCalls: [{ name: 'submit_result', input: { ok: true } }] });
    const turns: LlmModelCall[] = [];
    await gateway.runToolLoop({
      provider: 'anthropic',
      model: MODELS.anthropic,
      prompt: 'Submit.',
      tools: [
        {
          name: 'submit_result',
          description: 'Submits.',
          inputSchema: { type: 'object' },
          execute: async () => 'submitted',
        },
      ],
      maxTurns: 2,
      submitTool: 'submit_result',
      signal: new AbortController().signal,
      onModelCall: (turn) => turns.push(turn),
    });
    assert.equal(turns.length, 1);
    assert.equal(turns[0]?.rawFinishReason, 'tool_use');
    assert.match(String(turns[0]?.responseId), RESPONSE_ID.anthropic);
    assert.equal(turns[0]?.responseModel, MODELS.anthropic);
  });

  it('sends no system instructions when there are none', async () => {
    await gateway.generate(request('anthropic', { system: undefined }));
    assert.equal(lastCall().system, undefined);
    assert.equal(lastCall().body.system, undefined);
  });

  it("appends /api to a bare Ollama host, as Ollama's clients take it", () => {
    assert.equal(ollamaApiUrl('http://localhost:11434'), 'http://localhost:11434/api');
    assert.equal(ollamaApiUrl('http://localhost:11434/'), 'http://localhost:11434/api');
    assert.equal(ollamaApiUrl('http://localhost:11434/api/'), 'http://localhost:11434/api');
    assert.equal(ollamaApiUrl('https://proxy.example/ollama/api'), 'https://proxy.example/ollama/api');
  });

  it('passes maxOutputTokens to Ollama as options.num_predict', async () => {
    await gateway.generate(request('ollama', { maxOutputTokens: 33 }));
    assert.equal(lastCall().body.options?.num_predict, 33);
  });
});
