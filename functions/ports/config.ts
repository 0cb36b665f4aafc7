/**
 * The platform's settings as core and the adapters read them: parsed and validated once by
 * functions/platform/config.ts (the only reader of the environment), handed to core in CoreDeps.
 */

export const TIERS = ['free', 'pro', 'team', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export interface Config {
  mode: 'local' | 'aws';
  host: string;
  port: number;
  dataDir: string;
  bootstrapTier: Tier;
  bootstrapApiKey: string | undefined;
  tableName: string | undefined;
  /** PLATFORM_EMULATOR_ASSEMBLY_DIR (npm run start:emulated). */
  emulatorAssemblyDir: string | undefined;
  dynamodbEndpoint: string | undefined;
  awsRegion: string | undefined;
  maxBodyBytes: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  publicUrl: string | undefined;
  /** The most a call may run (below API Gateway's integration timeout in AWS). */
  maxCallSeconds: number;
  sandbox: 'bubblewrap' | 'unisolated' | 'ecs';
  /** PLATFORM_SANDBOX_HOST_PORTS: host loopback ports egress sandboxes may reach (local). */
  sandboxHostPorts: number[];
  sandboxCluster: string | undefined;
  sandboxTaskDefinition: string | undefined;
  sandboxSubnets: string[];
  sandboxSecurityGroups: string[];
  /** The ECS sandbox's bundled runner (in the function's asset; set by the stack). */
  sandboxRunnerFile: string | undefined;
  secretsPrefix: string;
  secretsKmsKeyId: string | undefined;
  bundleBucket: string | undefined;
  /** AWS_ENDPOINT_URL_S3: S3 elsewhere than AWS (the emulated deployment's). */
  s3Endpoint: string | undefined;
  bundleKmsKeyId: string | undefined;
  schedulerConcurrency: number;
  scheduleGroup: string | undefined;
  scheduleTargetArn: string | undefined;
  scheduleRoleArn: string | undefined;
  scheduleDlqArn: string | undefined;
  alertsFunction: string | undefined;
  serviceBackoffMs: number;
  serviceHealthyMs: number;
  serviceStartTimeoutMs: number;
  reconcileGraceMs: number;
  payments: {
    kind: 'local' | 'stripe';
    stripeSecretKey: string | undefined;
    stripeWebhookSecret: string | undefined;
    stripeApiBase: string | undefined;
    stripeSecretArn: string | undefined;
  };
  services: {
    cluster: string | undefined;
    subnets: string[];
    securityGroups: string[];
    executionRoleArn: string | undefined;
    listenerArn: string | undefined;
    vpcId: string | undefined;
    domain: string | undefined;
    logGroup: string | undefined;
    image: string | undefined;
    gatewayFile: string | undefined;
    launcherFile: string | undefined;
    urlScheme: 'https' | 'http';
    urlPort: number | undefined;
  };
  llm: Record<'anthropic' | 'openai' | 'google' | 'ollama', LlmProviderConfig>;
  /** PLATFORM_LLM_SECRET_ARN: the Secrets Manager secret holding the provider keys (AWS). */
  llmSecretArn: string | undefined;
}

export interface LlmProviderConfig {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** Overrides the built-in default model of the provider. */
  defaultModel: string | undefined;
}
