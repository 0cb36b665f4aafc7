/**
 * LLM providers. The spec names three supported providers (the Anthropic-style one first) plus
 * a fourth, local-model provider, and leaves their identifiers and default models to us
 * (docs/manifest.md).
 */

/** The providers a manifest's supported_providers may name (besides `any`). */
export const LLM_PROVIDERS = ['anthropic', 'openai', 'google'] as const;

/** The local-model provider: has a default model, but cannot be listed in supported_providers. */
export const LOCAL_PROVIDER = 'ollama';

export const PROVIDERS = [...LLM_PROVIDERS, LOCAL_PROVIDER] as const;

export type LlmProvider = (typeof LLM_PROVIDERS)[number];
export type LocalProvider = typeof LOCAL_PROVIDER;
export type Provider = (typeof PROVIDERS)[number];
/** A value of supported_providers. */
export type SupportedProvider = LlmProvider | 'any';

/** The platform's default model per provider: the last step of model resolution. */
export const DEFAULT_MODELS: Readonly<Record<Provider, string>> = {
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-5-mini',
  google: 'gemini-2.5-flash',
  ollama: 'llama3.2',
};
