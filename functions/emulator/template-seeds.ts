import { randomBytes } from 'node:crypto';
import type { Config } from '../platform/config.ts';
import { ENV } from '../shared/env-names.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import type { AsyncInvokeConfig } from './lambda-async-invocations.ts';
import type { SecretsManagerEmulator } from './secrets-manager-emulator.ts';

/**
 * What CloudFormation creates from the templates besides code, for the emulators: the secrets
 * (AWS::SecretsManager::Secret, with their SecretString or generated value) and each function's
 * asynchronous invocation settings (AWS::Lambda::EventInvokeConfig).
 */

/** The model provider settings, as the provider-keys secret holds them (docs/deploy.md). */
function providerSecret(config: Config): string {
  const { anthropic, openai, google, ollama } = config.llm;
  const entries: [string, string | undefined][] = [
    [ENV.anthropicApiKey, anthropic.apiKey],
    [ENV.anthropicBaseUrl, anthropic.baseUrl],
    [ENV.openaiApiKey, openai.apiKey],
    [ENV.openaiBaseUrl, openai.baseUrl],
    [ENV.googleApiKey, google.apiKey],
    [ENV.googleBaseUrl, google.baseUrl],
    [ENV.ollamaBaseUrl, ollama.baseUrl],
  ];
  return JSON.stringify(Object.fromEntries(entries.filter(([, v]) => v !== undefined)));
}

/** Stripe's keys as the template's Stripe secret holds them (docs/billing.md), when both are given. */
function stripeSecret(config: Config): string | undefined {
  const { stripeSecretKey, stripeWebhookSecret } = config.payments;
  if (!stripeSecretKey || !stripeWebhookSecret) return undefined;
  return JSON.stringify({ secret_key: stripeSecretKey, webhook_secret: stripeWebhookSecret });
}

/** The ARNs of the secrets the functions name in environment variable `name`. */
function secretArnsNamedBy(resolver: TemplateResolver, name: string): Set<string> {
  const arns = new Set<string>();
  for (const { stack, resource } of resolver.resourcesOfType('AWS::Lambda::Function')) {
    const v = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    if (v?.[name] !== undefined) arns.add(String(resolver.resolve(stack, v[name], name)));
  }
  return arns;
}

/**
 * Creates each template secret that does not exist yet. The stack's own secrets are then set from
 * the environment on every start, so `npm run start:emulated` honours the same variables as
 * `npm start`, through the path a deployment uses: the provider-keys secret (read by the run
 * functions through PLATFORM_LLM_SECRET_ARN) from the model provider variables, and the Stripe
 * secret (PLATFORM_STRIPE_SECRET_ARN) from STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET when both
 * are set.
 */
export function seedTemplateSecrets(
  resolver: TemplateResolver,
  secrets: SecretsManagerEmulator,
  config: Config,
): void {
  const fromEnvironment = new Map<string, string | undefined>();
  for (const arn of secretArnsNamedBy(resolver, ENV.llmSecretArn))
    fromEnvironment.set(arn, providerSecret(config));
  for (const arn of secretArnsNamedBy(resolver, ENV.stripeSecretArn))
    fromEnvironment.set(arn, stripeSecret(config));
  for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::SecretsManager::Secret')) {
    const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
      SecretString?: string;
      GenerateSecretString?: { SecretStringTemplate?: string; GenerateStringKey?: string };
      Description?: string;
    };
    const arn = String(resolver.resolve(stack, { Ref: logicalId }, logicalId));
    const name = resolver.physicalName(stack, logicalId);
    let value = p.SecretString;
    const generate = p.GenerateSecretString;
    if (value === undefined && generate?.SecretStringTemplate && generate.GenerateStringKey) {
      const template = JSON.parse(generate.SecretStringTemplate) as Record<string, unknown>;
      value = JSON.stringify({
        ...template,
        [generate.GenerateStringKey]: randomBytes(24).toString('base64url'),
      });
    }
    try {
      secrets.createSecret({
        name,
        arn,
        ...(value !== undefined ? { secretString: value } : {}),
        ...(p.Description ? { description: p.Description } : {}),
      });
    } catch (err) {
      if ((err as { code?: string }).code !== 'ResourceExistsException') throw err;
    }
    const current = fromEnvironment.get(arn);
    if (current !== undefined) secrets.putSecretValue(arn, current);
  }
}

/** Each function's EventInvokeConfig, by function name. */
export function eventInvokeConfigs(resolver: TemplateResolver): Map<string, Partial<AsyncInvokeConfig>> {
  const configs = new Map<string, Partial<AsyncInvokeConfig>>();
  for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::Lambda::EventInvokeConfig')) {
    const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
      FunctionName: string;
      MaximumRetryAttempts?: number;
      MaximumEventAgeInSeconds?: number;
    };
    configs.set(p.FunctionName, {
      ...(p.MaximumRetryAttempts !== undefined ? { maximumRetryAttempts: p.MaximumRetryAttempts } : {}),
      ...(p.MaximumEventAgeInSeconds !== undefined
        ? { maximumEventAgeSeconds: p.MaximumEventAgeInSeconds }
        : {}),
    });
  }
  return configs;
}
