import type * as z from 'zod';
import { type Config, configSchema, type LlmProviderConfig, providerSecretSchema } from '../ports/config.ts';
import { ENV, type Setting } from '../shared/env-names.ts';
import { ConfigError } from './config-error.ts';

// The settings' schema and shape live with the ports (core reads them); this module parses them.
export { type Config, type LlmProviderConfig, TIERS, type Tier } from '../ports/config.ts';

/**
 * The platform's configuration, parsed once from the environment. This module is the only
 * place that reads `process.env`; everything else receives a `Config`.
 */

export { ConfigError } from './config-error.ts';

/** The variables that are set: empty strings count as unset, as a shell's `VAR=` usually means. */
function setVariables(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
}

/** One ConfigError naming every bad or missing variable, a line each. */
function configError(issues: readonly z.core.$ZodIssue[], name: (key: PropertyKey) => string): ConfigError {
  const lines = issues.map(
    (i) => `  ${i.path.length ? name(i.path[0] as PropertyKey) : '(root)'}: ${i.message}`,
  );
  return new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

/**
 * The configuration of `env`, checked against the schema and the deployment's required settings
 * (ports/config.ts DEPLOYMENT_SETTINGS): a ConfigError names every variable that is bad or missing.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const set = setVariables(env);
  const settings: Record<string, string> = {};
  for (const [setting, name] of Object.entries(ENV)) if (name in set) settings[setting] = set[name] as string;
  const result = configSchema.safeParse(settings);
  if (!result.success) throw configError(result.error.issues, (key) => ENV[key as Setting] ?? String(key));
  return result.data as Config;
}

/**
 * The provider settings with the provider-keys secret's values (a JSON object under the
 * environment's names) filling in what the environment leaves unset. A malformed secret is a
 * ConfigError naming the bad fields, never their values.
 */
export function withProviderSecret(llm: Config['llm'], secretString: string): Config['llm'] {
  let json: unknown;
  try {
    json = JSON.parse(secretString);
  } catch {
    throw new ConfigError(
      'The provider-keys secret is not JSON: it must be an object such as {"ANTHROPIC_API_KEY": "…"}',
    );
  }
  const parsed = providerSecretSchema.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`The provider-keys secret is not valid:\n  ${fields.join('\n  ')}`);
  }
  const v = parsed.data;
  const fill = (current: LlmProviderConfig, apiKey: string | undefined, baseUrl: string | undefined) => ({
    ...current,
    apiKey: current.apiKey ?? apiKey,
    baseUrl: current.baseUrl ?? baseUrl,
  });
  return {
    anthropic: fill(llm.anthropic, v[ENV.anthropicApiKey], v[ENV.anthropicBaseUrl]),
    openai: fill(llm.openai, v[ENV.openaiApiKey], v[ENV.openaiBaseUrl]),
    google: fill(llm.google, v[ENV.googleApiKey], v[ENV.googleBaseUrl]),
    ollama: fill(llm.ollama, undefined, v[ENV.ollamaBaseUrl]),
  };
}

/** Refuses to build an adapter of the other deployment: "<what> runs only in PLATFORM_MODE=<mode>". */
export function assertMode(config: Config, mode: Config['mode'], what: string): void {
  if (config.mode !== mode) throw new Error(`${what} runs only in ${ENV.mode}=${mode}`);
}

let cached: Config | undefined;

/** The process's configuration, parsed on first use. */
export function processConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}
