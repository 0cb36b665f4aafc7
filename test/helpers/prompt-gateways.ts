/**
 * Two AI SDK gateways against the fake providers, for comparing the platform's own prompt calls
 * with the SDK's (test/adapters/direct-prompt-*.test.ts): `direct` takes the platform's path,
 * `reference` lets the SDK do the whole call (`promptCalls: 'sdk'`); both send through one pooled
 * transport that counts what went each way. The providers, models and texts compared are here too.
 */
import { AiSdkGateway, type LlmProvidersConfig } from '../../functions/adapters/llm/ai-sdk-gateway.ts';
import type { ModelTransport } from '../../functions/adapters/llm/model-transport.ts';
import { createPooledFetch, createPooledTransport } from '../../functions/adapters/llm/pooled-fetch.ts';
import type { LlmProviderId, LlmRequest, LlmResult } from '../../functions/ports/llm-gateway.ts';
import { type FakeLlmProviders, start } from './fake-llm-providers.ts';

export const KEYS: Record<LlmProviderId, string | undefined> = {
  anthropic: 'sk-ant-api03-FAKEKEYanthropic0123456789',
  openai: 'sk-proj-FAKEKEYopenai0123456789',
  google: 'AIzaFAKEKEYgoogle0123456789abcdef',
  ollama: undefined,
};

/** Model ids of each family whose requests the SDK builds differently (roles, limits, modes). */
export const MODELS: Record<LlmProviderId, string[]> = {
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

export const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
  required: ['answer', 'confidence'],
  additionalProperties: false,
};
/** A schema Anthropic's native structured output cannot hold (the SDK uses a json tool). */
export const OPEN_SCHEMA = { type: 'object', properties: { data: { type: 'object' } }, required: ['data'] };

/** Texts that JSON escapes in every way, and one that looks like a template's placeholder. */
export const TEXTS = [
  'Say hello to the tests',
  'Quotes " and \\ backslashes,\nnew lines\tand tabs, </script>, \u2028\u2029, emoji 🦓, nul \u0000 and "agenthost-template-prompt-x"',
];

export function gatewayConfig(fake: FakeLlmProviders): LlmProvidersConfig {
  const llm = {} as LlmProvidersConfig;
  for (const p of Object.keys(MODELS) as LlmProviderId[])
    llm[p] = { apiKey: KEYS[p], baseUrl: fake.baseUrls[p], defaultModel: undefined };
  return llm;
}

export function request(provider: LlmProviderId, model: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  return {
    provider,
    model,
    system: 'You are terse.',
    prompt: TEXTS[0]!,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** A result with its id's number left out (the fake numbers each answer it gives). */
export function withoutNumber(result: LlmResult): LlmResult {
  return { ...result, responseId: result.responseId?.replace(/\d+$/, '<n>') };
}

/** The result or the error of a call, in a form to compare. */
export async function outcome(gateway: AiSdkGateway, req: LlmRequest): Promise<unknown> {
  try {
    return { result: await gateway.generate(req) };
  } catch (error) {
    const e = error as Error & { status?: number; provider?: string };
    return { error: { name: e.name, message: e.message, status: e.status, provider: e.provider } };
  }
}
export interface GatewayPair {
  fake: FakeLlmProviders;
  direct: AiSdkGateway;
  reference: AiSdkGateway;
  /** Requests sent through the transport (`send`) and through its fetch (`fetch`, the SDK's). */
  counts: { send: number; fetch: number };
}

export async function startGatewayPair(): Promise<GatewayPair> {
  const fake = await start();
  const counts = { send: 0, fetch: 0 };
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
  const config = gatewayConfig(fake);
  return {
    fake,
    direct: new AiSdkGateway(config, { fetch, send }),
    reference: new AiSdkGateway(gatewayConfig(fake), { fetch, send, promptCalls: 'sdk' }),
    counts,
  };
}
