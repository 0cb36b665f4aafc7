/**
 * The environment variables of the platform, by the setting each one holds. The configuration
 * schema (ports/config.ts) is keyed by these settings and reads each from its variable here; the
 * stacks (lib/), the CLI (bin/) and the emulated deployment set them through these constants, so a
 * variable is named in one place. Names only: lib/ imports this without the schema (or zod).
 */

export const ENV = {
  mode: 'PLATFORM_MODE',
  host: 'HOST',
  port: 'PORT',
  dataDir: 'PLATFORM_DATA_DIR',
  bootstrapTier: 'PLATFORM_BOOTSTRAP_TIER',
  bootstrapApiKey: 'PLATFORM_BOOTSTRAP_API_KEY',
  tableName: 'PLATFORM_TABLE_NAME',
  emulatorAssemblyDir: 'PLATFORM_EMULATOR_ASSEMBLY_DIR',
  dynamodbEndpoint: 'PLATFORM_DYNAMODB_ENDPOINT',
  awsRegion: 'AWS_REGION',
  maxBodyBytes: 'PLATFORM_MAX_BODY_BYTES',
  logLevel: 'PLATFORM_LOG_LEVEL',
  publicUrl: 'PLATFORM_PUBLIC_URL',
  corsOrigins: 'PLATFORM_CORS_ORIGINS',
  allowedHosts: 'PLATFORM_ALLOWED_HOSTS',
  addressRateLimit: 'PLATFORM_ADDRESS_RATE_LIMIT',
  maxCallSeconds: 'PLATFORM_MAX_CALL_SECONDS',
  sandbox: 'PLATFORM_SANDBOX',
  sandboxHostPorts: 'PLATFORM_SANDBOX_HOST_PORTS',
  sandboxCluster: 'PLATFORM_SANDBOX_CLUSTER',
  sandboxTaskDefinition: 'PLATFORM_SANDBOX_TASK_DEFINITION',
  sandboxSubnets: 'PLATFORM_SANDBOX_SUBNETS',
  sandboxSecurityGroups: 'PLATFORM_SANDBOX_SECURITY_GROUPS',
  sandboxRunnerFile: 'PLATFORM_SANDBOX_RUNNER_FILE',
  secretsPrefix: 'PLATFORM_SECRETS_PREFIX',
  secretsKmsKeyId: 'PLATFORM_SECRETS_KMS_KEY_ID',
  bundleBucket: 'PLATFORM_BUNDLE_BUCKET',
  s3Endpoint: 'AWS_ENDPOINT_URL_S3',
  bundleKmsKeyId: 'PLATFORM_BUNDLE_KMS_KEY_ID',
  schedulerConcurrency: 'PLATFORM_SCHEDULER_CONCURRENCY',
  scheduleGroup: 'PLATFORM_SCHEDULE_GROUP',
  scheduleTargetArn: 'PLATFORM_SCHEDULE_TARGET_ARN',
  scheduleRoleArn: 'PLATFORM_SCHEDULE_ROLE_ARN',
  scheduleDlqArn: 'PLATFORM_SCHEDULE_DLQ_ARN',
  alertsFunction: 'PLATFORM_ALERTS_FUNCTION',
  serviceBackoffMs: 'PLATFORM_SERVICE_BACKOFF_MS',
  serviceHealthyMs: 'PLATFORM_SERVICE_HEALTHY_MS',
  serviceStartTimeoutMs: 'PLATFORM_SERVICE_START_TIMEOUT_MS',
  servicesCluster: 'PLATFORM_SERVICES_CLUSTER',
  servicesSubnets: 'PLATFORM_SERVICES_SUBNETS',
  servicesSecurityGroups: 'PLATFORM_SERVICES_SECURITY_GROUPS',
  servicesExecutionRoleArn: 'PLATFORM_SERVICES_EXECUTION_ROLE_ARN',
  servicesListenerArn: 'PLATFORM_SERVICES_LISTENER_ARN',
  servicesVpcId: 'PLATFORM_SERVICES_VPC_ID',
  servicesDomain: 'PLATFORM_SERVICES_DOMAIN',
  servicesLogGroup: 'PLATFORM_SERVICES_LOG_GROUP',
  servicesImage: 'PLATFORM_SERVICES_IMAGE',
  servicesGatewayFile: 'PLATFORM_SERVICES_GATEWAY_FILE',
  servicesLauncherFile: 'PLATFORM_SERVICES_LAUNCHER_FILE',
  servicesUrlScheme: 'PLATFORM_SERVICES_URL_SCHEME',
  servicesUrlPort: 'PLATFORM_SERVICES_URL_PORT',
  payments: 'PLATFORM_PAYMENTS',
  reconcileGraceMs: 'PLATFORM_RECONCILE_GRACE_MS',
  stripeSecretKey: 'STRIPE_SECRET_KEY',
  stripeWebhookSecret: 'STRIPE_WEBHOOK_SECRET',
  stripeApiBase: 'STRIPE_API_BASE',
  stripeSecretArn: 'PLATFORM_STRIPE_SECRET_ARN',
  llmSecretArn: 'PLATFORM_LLM_SECRET_ARN',
  anthropicApiKey: 'ANTHROPIC_API_KEY',
  anthropicBaseUrl: 'ANTHROPIC_BASE_URL',
  openaiApiKey: 'OPENAI_API_KEY',
  openaiBaseUrl: 'OPENAI_BASE_URL',
  googleApiKey: 'GOOGLE_GENERATIVE_AI_API_KEY',
  googleBaseUrl: 'GOOGLE_GENERATIVE_AI_BASE_URL',
  ollamaBaseUrl: 'OLLAMA_BASE_URL',
  anthropicDefaultModel: 'PLATFORM_DEFAULT_MODEL_ANTHROPIC',
  openaiDefaultModel: 'PLATFORM_DEFAULT_MODEL_OPENAI',
  googleDefaultModel: 'PLATFORM_DEFAULT_MODEL_GOOGLE',
  ollamaDefaultModel: 'PLATFORM_DEFAULT_MODEL_OLLAMA',
} as const;

/** A setting of the platform (a key of ENV). */
export type Setting = keyof typeof ENV;

/**
 * The CLI's client settings (docs/cli.md): where the platform is, which key and workspace to use,
 * which profile of which config file. Each overrides the profile's value.
 */
export const CLIENT_ENV = {
  url: 'AGENTHOST_URL',
  apiKey: 'AGENTHOST_API_KEY',
  workspace: 'AGENTHOST_WORKSPACE',
  profile: 'AGENTHOST_PROFILE',
  config: 'AGENTHOST_CONFIG',
} as const;
