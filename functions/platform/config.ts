import { resolve } from 'node:path';
import * as z from 'zod';
import { type Config, type LlmProviderConfig, TIERS } from '../ports/config.ts';

// The settings' shape lives with the ports (core reads it); this module parses them.
export { type Config, type LlmProviderConfig, TIERS, type Tier } from '../ports/config.ts';

/**
 * The platform's configuration, parsed once from the environment. This module is the only
 * place that reads `process.env`; everything else receives a `Config`.
 */

const port = z.coerce.number().int().min(0).max(65535);

const schema = z
  .object({
    PLATFORM_MODE: z.enum(['local', 'aws']).default('local'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: port.default(8787),
    PLATFORM_DATA_DIR: z.string().min(1).default('./.data'),
    PLATFORM_BOOTSTRAP_TIER: z.enum(TIERS).default('pro'),
    PLATFORM_BOOTSTRAP_API_KEY: z
      .string()
      .min(20, 'must be at least 20 characters')
      .max(200)
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      // ahr_ marks run credentials (core/api-keys/api-key-secret.ts RUN_KEY_PREFIX), which no
      // route but the call route accepts: such a bootstrap key could never authenticate.
      .refine((v) => !v.startsWith('ahr_'), 'must not start with ahr_ (the prefix of run credentials)')
      .optional(),
    PLATFORM_TABLE_NAME: z.string().min(3).max(255).optional(),
    // npm run start:emulated: where the synthesized cloud assembly is kept (and reused while the
    // sources are unchanged); default <data dir>/aws/cdk.out.
    PLATFORM_EMULATOR_ASSEMBLY_DIR: z.string().min(1).optional(),
    PLATFORM_DYNAMODB_ENDPOINT: z.url().optional(),
    AWS_REGION: z.string().min(1).optional(),
    PLATFORM_MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(10 * 1024 * 1024)
      .default(1024 * 1024),
    PLATFORM_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    PLATFORM_PUBLIC_URL: z.url().optional(),
    PLATFORM_MAX_CALL_SECONDS: z.coerce.number().int().min(1).max(300).default(300),
    // Where user code runs: bubblewrap locally (default), ECS Fargate in AWS (default), or, only
    // when the operator says so explicitly, without isolation.
    PLATFORM_SANDBOX: z.enum(['bubblewrap', 'unisolated', 'ecs']).optional(),
    // Host loopback TCP ports that sandboxes with outbound network (always-on services,
    // orchestrators) may reach at the same port on their own 127.0.0.1 (docs/sandbox.md). Nothing
    // else on the host's loopback is reachable from a sandbox.
    PLATFORM_SANDBOX_HOST_PORTS: z
      .string()
      .regex(
        /^\s*\d{1,5}\s*(,\s*\d{1,5}\s*)*$/,
        'must be a comma-separated list of TCP ports, e.g. 5432,6379',
      )
      .refine(
        (v) => v.split(',').every((p) => Number(p) >= 1 && Number(p) <= 65535),
        'every port must be 1-65535',
      )
      .optional(),
    // The ECS sandbox (set by the stack on the calls function).
    PLATFORM_SANDBOX_CLUSTER: z.string().min(1).optional(),
    PLATFORM_SANDBOX_TASK_DEFINITION: z.string().min(1).optional(),
    PLATFORM_SANDBOX_SUBNETS: z.string().min(1).optional(),
    PLATFORM_SANDBOX_SECURITY_GROUPS: z.string().min(1).optional(),
    PLATFORM_SANDBOX_RUNNER_FILE: z.string().min(1).optional(),
    PLATFORM_SECRETS_PREFIX: z
      .string()
      .regex(
        /^[A-Za-z0-9_+=.@-]+(?:\/[A-Za-z0-9_+=.@-]+)*$/,
        'must be a Secrets Manager name prefix such as agenthost/prod',
      )
      .max(200)
      .default('agenthost'),
    PLATFORM_SECRETS_KMS_KEY_ID: z.string().min(1).max(2048).optional(),
    PLATFORM_BUNDLE_BUCKET: z.string().min(3).max(63).optional(),
    // The AWS SDK's own variable for an S3-compatible endpoint (the S3 client reads it itself); read
    // here too so the URLs the platform signs without the client name the same endpoint.
    AWS_ENDPOINT_URL_S3: z.url().optional(),
    PLATFORM_BUNDLE_KMS_KEY_ID: z.string().min(1).max(2048).optional(),
    // Schedules. Locally: how many scheduled runs the in-process loop runs at once. In AWS (set by
    // the stack): the EventBridge Scheduler group, the fire Lambda, the role Scheduler assumes to
    // invoke it, the dead-letter queue, and the alert-delivery Lambda.
    PLATFORM_SCHEDULER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
    PLATFORM_SCHEDULE_GROUP: z.string().min(1).max(64).optional(),
    PLATFORM_SCHEDULE_TARGET_ARN: z.string().min(1).max(2048).optional(),
    PLATFORM_SCHEDULE_ROLE_ARN: z.string().min(1).max(2048).optional(),
    PLATFORM_SCHEDULE_DLQ_ARN: z.string().min(1).max(2048).optional(),
    PLATFORM_ALERTS_FUNCTION: z.string().min(1).max(256).optional(),
    // Always-on services (docs/services.md): the first restart backoff (doubling, capped at 30 s),
    // how long an app must stay up for its restart-failure counter to reset, and how long it may
    // take to listen on its port after starting.
    PLATFORM_SERVICE_BACKOFF_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
    PLATFORM_SERVICE_HEALTHY_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
    PLATFORM_SERVICE_START_TIMEOUT_MS: z.coerce.number().int().min(500).max(600_000).default(60_000),
    // AWS services (set by the stack): the cluster, the task network, the execution role, the
    // HTTPS listener and its VPC, the domain of service URLs, the log group, the image, and the
    // task programs bundled into the function's asset (the gateway and the app launcher).
    PLATFORM_SERVICES_CLUSTER: z.string().min(1).optional(),
    PLATFORM_SERVICES_SUBNETS: z.string().min(1).optional(),
    PLATFORM_SERVICES_SECURITY_GROUPS: z.string().min(1).optional(),
    PLATFORM_SERVICES_EXECUTION_ROLE_ARN: z.string().min(1).optional(),
    PLATFORM_SERVICES_LISTENER_ARN: z.string().min(1).optional(),
    PLATFORM_SERVICES_VPC_ID: z.string().min(1).optional(),
    PLATFORM_SERVICES_DOMAIN: z.string().min(1).max(200).optional(),
    PLATFORM_SERVICES_LOG_GROUP: z.string().min(1).optional(),
    PLATFORM_SERVICES_IMAGE: z.string().min(1).optional(),
    PLATFORM_SERVICES_GATEWAY_FILE: z.string().min(1).optional(),
    PLATFORM_SERVICES_LAUNCHER_FILE: z.string().min(1).optional(),
    // Where the services' load balancer answers, when not at https://<host> (443): the emulated
    // deployment's plain-HTTP loopback front sets http and its port (docs/deploy.md).
    PLATFORM_SERVICES_URL_SCHEME: z.enum(['https', 'http']).default('https'),
    PLATFORM_SERVICES_URL_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    // Payments (docs/billing.md): local checkout pages, or Stripe. Stripe's keys come from the
    // environment, or in AWS from the Secrets Manager secret the stack names (JSON with
    // secret_key and webhook_secret). STRIPE_API_BASE points the SDK elsewhere (tests).
    PLATFORM_PAYMENTS: z.enum(['local', 'stripe']).optional(),
    // A paid call's charge still pending this long after its deadline is refunded (docs/billing.md).
    PLATFORM_RECONCILE_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
    STRIPE_SECRET_KEY: z.string().min(1).optional(),
    STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
    STRIPE_API_BASE: z.url().optional(),
    PLATFORM_STRIPE_SECRET_ARN: z.string().min(1).optional(),
    // LLM providers, under the vendors' usual names. In AWS the stack keeps them in one Secrets
    // Manager secret (JSON with the same names) and gives the run functions its ARN instead.
    PLATFORM_LLM_SECRET_ARN: z.string().min(1).optional(),
    // LLM providers, under the vendors' usual names.
    ANTHROPIC_API_KEY: z.string().min(1).optional(),
    ANTHROPIC_BASE_URL: z.url().optional(),
    OPENAI_API_KEY: z.string().min(1).optional(),
    OPENAI_BASE_URL: z.url().optional(),
    GOOGLE_GENERATIVE_AI_API_KEY: z.string().min(1).optional(),
    GOOGLE_GENERATIVE_AI_BASE_URL: z.url().optional(),
    OLLAMA_BASE_URL: z.url().optional(),
    // Platform default model per provider (the last step of model resolution).
    PLATFORM_DEFAULT_MODEL_ANTHROPIC: z.string().min(1).optional(),
    PLATFORM_DEFAULT_MODEL_OPENAI: z.string().min(1).optional(),
    PLATFORM_DEFAULT_MODEL_GOOGLE: z.string().min(1).optional(),
    PLATFORM_DEFAULT_MODEL_OLLAMA: z.string().min(1).optional(),
  })
  .superRefine((env, ctx) => {
    const own = env.PORT;
    if (own !== 0 && csv(env.PLATFORM_SANDBOX_HOST_PORTS).map(Number).includes(own)) {
      ctx.addIssue({
        code: 'custom',
        path: ['PLATFORM_SANDBOX_HOST_PORTS'],
        message: `must not include the platform's own port (${own}): services are kept off it (docs/sandbox.md)`,
      });
    }
    if (env.PLATFORM_MODE === 'aws' && !env.PLATFORM_TABLE_NAME) {
      ctx.addIssue({
        code: 'custom',
        path: ['PLATFORM_TABLE_NAME'],
        message: 'is required when PLATFORM_MODE=aws',
      });
    }
  });

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings count as unset, as a shell's `VAR=` usually means.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = result.data;
  return {
    mode: e.PLATFORM_MODE,
    host: e.HOST,
    port: e.PORT,
    dataDir: resolve(e.PLATFORM_DATA_DIR),
    bootstrapTier: e.PLATFORM_BOOTSTRAP_TIER,
    bootstrapApiKey: e.PLATFORM_BOOTSTRAP_API_KEY,
    tableName: e.PLATFORM_TABLE_NAME,
    emulatorAssemblyDir: e.PLATFORM_EMULATOR_ASSEMBLY_DIR
      ? resolve(e.PLATFORM_EMULATOR_ASSEMBLY_DIR)
      : undefined,
    dynamodbEndpoint: e.PLATFORM_DYNAMODB_ENDPOINT,
    awsRegion: e.AWS_REGION,
    maxBodyBytes: e.PLATFORM_MAX_BODY_BYTES,
    logLevel: e.PLATFORM_LOG_LEVEL,
    publicUrl: e.PLATFORM_PUBLIC_URL,
    maxCallSeconds: e.PLATFORM_MAX_CALL_SECONDS,
    sandbox: e.PLATFORM_SANDBOX ?? (e.PLATFORM_MODE === 'aws' ? 'ecs' : 'bubblewrap'),
    sandboxHostPorts: csv(e.PLATFORM_SANDBOX_HOST_PORTS).map(Number),
    sandboxCluster: e.PLATFORM_SANDBOX_CLUSTER,
    sandboxTaskDefinition: e.PLATFORM_SANDBOX_TASK_DEFINITION,
    sandboxSubnets: csv(e.PLATFORM_SANDBOX_SUBNETS),
    sandboxSecurityGroups: csv(e.PLATFORM_SANDBOX_SECURITY_GROUPS),
    sandboxRunnerFile: e.PLATFORM_SANDBOX_RUNNER_FILE,
    secretsPrefix: e.PLATFORM_SECRETS_PREFIX,
    secretsKmsKeyId: e.PLATFORM_SECRETS_KMS_KEY_ID,
    bundleBucket: e.PLATFORM_BUNDLE_BUCKET,
    s3Endpoint: e.AWS_ENDPOINT_URL_S3,
    bundleKmsKeyId: e.PLATFORM_BUNDLE_KMS_KEY_ID,
    schedulerConcurrency: e.PLATFORM_SCHEDULER_CONCURRENCY,
    scheduleGroup: e.PLATFORM_SCHEDULE_GROUP,
    scheduleTargetArn: e.PLATFORM_SCHEDULE_TARGET_ARN,
    scheduleRoleArn: e.PLATFORM_SCHEDULE_ROLE_ARN,
    scheduleDlqArn: e.PLATFORM_SCHEDULE_DLQ_ARN,
    alertsFunction: e.PLATFORM_ALERTS_FUNCTION,
    serviceBackoffMs: e.PLATFORM_SERVICE_BACKOFF_MS,
    serviceHealthyMs: e.PLATFORM_SERVICE_HEALTHY_MS,
    serviceStartTimeoutMs: e.PLATFORM_SERVICE_START_TIMEOUT_MS,
    reconcileGraceMs: e.PLATFORM_RECONCILE_GRACE_MS,
    payments: {
      kind: e.PLATFORM_PAYMENTS ?? (e.PLATFORM_MODE === 'aws' ? 'stripe' : 'local'),
      stripeSecretKey: e.STRIPE_SECRET_KEY,
      stripeWebhookSecret: e.STRIPE_WEBHOOK_SECRET,
      stripeApiBase: e.STRIPE_API_BASE,
      stripeSecretArn: e.PLATFORM_STRIPE_SECRET_ARN,
    },
    services: {
      cluster: e.PLATFORM_SERVICES_CLUSTER,
      subnets: csv(e.PLATFORM_SERVICES_SUBNETS),
      securityGroups: csv(e.PLATFORM_SERVICES_SECURITY_GROUPS),
      executionRoleArn: e.PLATFORM_SERVICES_EXECUTION_ROLE_ARN,
      listenerArn: e.PLATFORM_SERVICES_LISTENER_ARN,
      vpcId: e.PLATFORM_SERVICES_VPC_ID,
      domain: e.PLATFORM_SERVICES_DOMAIN,
      logGroup: e.PLATFORM_SERVICES_LOG_GROUP,
      image: e.PLATFORM_SERVICES_IMAGE,
      gatewayFile: e.PLATFORM_SERVICES_GATEWAY_FILE,
      launcherFile: e.PLATFORM_SERVICES_LAUNCHER_FILE,
      urlScheme: e.PLATFORM_SERVICES_URL_SCHEME,
      urlPort: e.PLATFORM_SERVICES_URL_PORT,
    },
    llmSecretArn: e.PLATFORM_LLM_SECRET_ARN,
    llm: {
      anthropic: {
        apiKey: e.ANTHROPIC_API_KEY,
        baseUrl: e.ANTHROPIC_BASE_URL,
        defaultModel: e.PLATFORM_DEFAULT_MODEL_ANTHROPIC,
      },
      openai: {
        apiKey: e.OPENAI_API_KEY,
        baseUrl: e.OPENAI_BASE_URL,
        defaultModel: e.PLATFORM_DEFAULT_MODEL_OPENAI,
      },
      google: {
        apiKey: e.GOOGLE_GENERATIVE_AI_API_KEY,
        baseUrl: e.GOOGLE_GENERATIVE_AI_BASE_URL,
        defaultModel: e.PLATFORM_DEFAULT_MODEL_GOOGLE,
      },
      ollama: {
        apiKey: undefined,
        baseUrl: e.OLLAMA_BASE_URL,
        defaultModel: e.PLATFORM_DEFAULT_MODEL_OLLAMA,
      },
    },
  };
}

/** The provider variables the provider-keys secret may hold (the same names as the environment's). */
const providerSecretSchema = z.strictObject({
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url().optional(),
  GOOGLE_GENERATIVE_AI_API_KEY: z.string().min(1).optional(),
  GOOGLE_GENERATIVE_AI_BASE_URL: z.url().optional(),
  OLLAMA_BASE_URL: z.url().optional(),
});

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
    anthropic: fill(llm.anthropic, v.ANTHROPIC_API_KEY, v.ANTHROPIC_BASE_URL),
    openai: fill(llm.openai, v.OPENAI_API_KEY, v.OPENAI_BASE_URL),
    google: fill(llm.google, v.GOOGLE_GENERATIVE_AI_API_KEY, v.GOOGLE_GENERATIVE_AI_BASE_URL),
    ollama: fill(llm.ollama, undefined, v.OLLAMA_BASE_URL),
  };
}

function csv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

let cached: Config | undefined;

/** The process's configuration, parsed on first use. */
export function processConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** The CLI's client settings (`agenthost publish`): where the platform is and which key to use. */
export interface ClientConfig {
  url: string;
  apiKey: string | undefined;
}

const clientSchema = z.object({
  AGENTHOST_URL: z.url().default('http://127.0.0.1:8787'),
  AGENTHOST_API_KEY: z.string().min(1).optional(),
});

export function parseClientConfig(env: Record<string, string | undefined>): ClientConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = clientSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { url: result.data.AGENTHOST_URL.replace(/\/+$/, ''), apiKey: result.data.AGENTHOST_API_KEY };
}

export function processClientConfig(): ClientConfig {
  return parseClientConfig(process.env);
}
