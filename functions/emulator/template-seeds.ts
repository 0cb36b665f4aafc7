import { randomBytes } from 'node:crypto';
import type { Config } from '../platform/config.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import type { AsyncInvokeConfig } from './lambda-api-emulator.ts';
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
    ['ANTHROPIC_API_KEY', anthropic.apiKey],
    ['ANTHROPIC_BASE_URL', anthropic.baseUrl],
    ['OPENAI_API_KEY', openai.apiKey],
    ['OPENAI_BASE_URL', openai.baseUrl],
    ['GOOGLE_GENERATIVE_AI_API_KEY', google.apiKey],
    ['GOOGLE_GENERATIVE_AI_BASE_URL', google.baseUrl],
    ['OLLAMA_BASE_URL', ollama.baseUrl],
  ];
  return JSON.stringify(Object.fromEntries(entries.filter(([, v]) => v !== undefined)));
}

/**
 * Creates each template secret that does not exist yet. The provider-keys secret (the one the
 * run functions read through PLATFORM_LLM_SECRET_ARN) is set on every start from the provider
 * variables, so `npm run start:emulated` honours them as `npm start` does, through the path a
 * deployment uses.
 */
export function seedTemplateSecrets(
  resolver: TemplateResolver,
  secrets: SecretsManagerEmulator,
  config: Config,
): void {
  const providerArns = new Set<string>();
  for (const { stack, resource } of resolver.resourcesOfType('AWS::Lambda::Function')) {
    const v = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    if (v?.PLATFORM_LLM_SECRET_ARN !== undefined) {
      providerArns.add(String(resolver.resolve(stack, v.PLATFORM_LLM_SECRET_ARN, 'PLATFORM_LLM_SECRET_ARN')));
    }
  }
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
    if (providerArns.has(arn)) secrets.putSecretValue(arn, providerSecret(config));
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
