/*
 * A provider's models through the AI SDK: the vendor package, loaded on the provider's first call,
 * configured from the platform's settings alone (ai-sdk-gateway.ts uses it).
 */
import type { LanguageModel } from 'ai';
import type { LlmProviderConfig } from '../../ports/config.ts';
import type { LlmProviderId } from '../../ports/llm-gateway.ts';

/** A provider's model as the AI SDK's LanguageModelV4 interface (every provider here implements it). */
export type ModelV4 = Extract<LanguageModel, { specificationVersion: 'v4' }>;
export type ModelFactory = (modelId: string) => ModelV4;

/**
 * The vendors' public endpoints, passed explicitly when no base URL is configured so that the SDK
 * never falls back to reading the environment on its own: the gateway depends on its config only.
 */
const DEFAULT_BASE_URLS: Record<Exclude<LlmProviderId, 'ollama'>, string> = {
  anthropic: 'https://api.anthropic.com/v1',
  openai: 'https://api.openai.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
};

/** The models of one provider, from its vendor package. */
export async function createFactory(
  provider: LlmProviderId,
  settings: LlmProviderConfig,
  fetch: typeof globalThis.fetch | undefined,
): Promise<ModelFactory> {
  switch (provider) {
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      const p = createAnthropic({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl ?? DEFAULT_BASE_URLS.anthropic,
        fetch,
      });
      return (modelId) => p.messages(modelId);
    }
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      const p = createOpenAI({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl ?? DEFAULT_BASE_URLS.openai,
        fetch,
      });
      return (modelId) => p.chat(modelId);
    }
    case 'google': {
      const { createGoogle } = await import('@ai-sdk/google');
      const p = createGoogle({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl ?? DEFAULT_BASE_URLS.google,
        fetch,
      });
      return (modelId) => p.languageModel(modelId);
    }
    case 'ollama': {
      const { createOllama } = await import('ollama-ai-provider-v2');
      const p = createOllama({
        baseURL: ollamaApiUrl(settings.baseUrl!),
        fetch,
        ...(settings.apiKey ? { headers: { Authorization: `Bearer ${settings.apiKey}` } } : {}),
      });
      return (modelId) => p.chat(modelId);
    }
  }
}

/** `http://host:11434` (Ollama's usual address) → `http://host:11434/api`; any other path is kept. */
export function ollamaApiUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  try {
    const url = new URL(trimmed);
    if (url.pathname === '/' || url.pathname === '') return `${trimmed}/api`;
  } catch {
    // Not a URL: leave it to the SDK to fail on.
  }
  return trimmed;
}
