import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assertBundleKey, assertDownloadUrlTtl, type BundleStore } from '../ports/bundle-store.ts';
import { type Clock, epochSeconds, systemClock } from '../ports/clock.ts';
import type { CoreDeps } from '../ports/core-deps.ts';
import type { LlmGateway } from '../ports/llm-gateway.ts';
import type { Notifier } from '../ports/notifier.ts';
import type { Payments } from '../ports/payments.ts';
import type { Sandbox } from '../ports/sandbox.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { SecretVault } from '../ports/secret-vault.ts';
import type { ServiceRunner } from '../ports/service-runner.ts';
import type { Store } from '../ports/store.ts';
import { PlatformError } from '../shared/errors.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { checkAlertUrl, sendAlertNow } from './alert-sender.ts';
import { type Config, withProviderSecret } from './config.ts';

/** Everything a handler or core function may touch: built once per process from config. */
/** The dependency set the composition root builds (what core receives: ports/core-deps.ts). */
export type Deps = CoreDeps;

export interface DepsOverrides {
  clock?: Clock;
  /** A store built by the caller (the emulator's, on DynamoDB Local with its own client). */
  store?: Store;
  logger?: Logger;
  llm?: LlmGateway;
  sandbox?: Sandbox;
  notifier?: Notifier;
  scheduler?: Scheduler;
}

/**
 * The one dependency factory. Adapters are imported dynamically so a Lambda bundle for AWS mode
 * never evaluates the local adapters' modules at cold start, and vice versa.
 */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const store =
    overrides.store ??
    (config.mode === 'aws' ? await createAwsStore(config, clock) : await createLocalStore(config, clock));
  try {
    const vault =
      config.mode === 'aws' ? await createAwsVault(config) : await createLocalVault(config, store);
    const bundles = config.mode === 'aws' ? await createS3Bundles(config) : await createFileBundles(config);
    const llm = overrides.llm ?? createLlmGateway(config);
    const sandbox = overrides.sandbox ?? createSandbox(config);
    const scheduler =
      overrides.scheduler ??
      (config.mode === 'aws' ? createEventBridgeScheduler(config) : new LocalScheduler());
    const notifier = overrides.notifier ?? (await createNotifier(config, logger));
    const serviceRunner = await createServiceRunner(config, sandbox, logger);
    const payments = createPayments(config);
    const deps: Deps = {
      config,
      store,
      vault,
      bundles,
      llm,
      sandbox,
      scheduler,
      notifier,
      serviceRunner,
      payments,
      clock,
      logger,
    };
    if (config.mode === 'local') {
      // The host reports crashes, readiness and logs to the supervisor, which decides.
      const { bindLocalSupervision } = await import('./local-supervision.ts');
      bindLocalSupervision(deps);
    }
    return deps;
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The names of T's methods. */
type MethodOf<T> = {
  [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never;
}[keyof T];

/**
 * An adapter built on its first use: the listed methods forward to it. Lambdas that never call a
 * port then never import its SDK client (lib/lambda-bundling.ts leaves it out of their bundles).
 * Every member of the port is either listed (`lazy`) or given in `eager`: the type of `eager` is
 * the port without the listed methods, so a method added to the port and forgotten here is a
 * compile error, not an undefined function at run time.
 */
function lazyPort<T extends object>() {
  return <L extends MethodOf<T>>(build: () => Promise<T>, lazy: readonly L[], eager: Omit<T, L>): T =>
    lazyProxy<T>(build, lazy, eager);
}

function lazyProxy<T extends object>(
  build: () => Promise<T>,
  lazy: readonly PropertyKey[],
  eager: object,
): T {
  let instance: Promise<T> | undefined;
  const get = () => {
    // A failed build (a throttled secret read, say) is tried again on the next call, not kept.
    instance ??= build().catch((err: unknown) => {
      instance = undefined;
      throw err;
    });
    return instance;
  };
  const proxy = { ...eager } as Record<PropertyKey, unknown>;
  for (const m of lazy) {
    // The type cannot refuse a member given both ways (its check is deferred for generic calls):
    // the lazy one would shadow the eager one, so it is refused here, where every test builds deps.
    if (m in proxy) throw new Error(`lazyPort: ${String(m)} is both lazy and eager`);
    proxy[m] = async (...args: unknown[]) => {
      const target = await get();
      return ((target as Record<PropertyKey, unknown>)[m] as (...a: unknown[]) => unknown).apply(
        target,
        args,
      );
    };
  }
  return proxy as T;
}

export const SQLITE_FILE = 'agenthost.db';
export const VAULT_KEY_FILE = 'vault.key';

export async function createLocalStore(config: Config, clock: Clock): Promise<Store> {
  if (config.mode !== 'local') throw new Error('The SQLite store runs only in PLATFORM_MODE=local');
  const { SqliteStore } = await import('../adapters/local/sqlite-store.ts');
  return new SqliteStore(join(config.dataDir, SQLITE_FILE), { nowSeconds: () => epochSeconds(clock) });
}

export async function createAwsStore(config: Config, clock: Clock): Promise<Store> {
  if (config.mode !== 'aws' || !config.tableName) {
    throw new Error('The DynamoDB store runs only in PLATFORM_MODE=aws with PLATFORM_TABLE_NAME set');
  }
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDbStore } = await import('../adapters/aws/dynamodb-store.ts');
  const client = new DynamoDBClient({
    region: config.awsRegion,
    ...(config.dynamodbEndpoint ? { endpoint: config.dynamodbEndpoint } : {}),
  });
  return new DynamoDbStore({ tableName: config.tableName, client, nowSeconds: () => epochSeconds(clock) });
}

export async function createLocalVault(config: Config, store: Store): Promise<SecretVault> {
  if (config.mode !== 'local') throw new Error('The local vault runs only in PLATFORM_MODE=local');
  const { LocalSecretVault } = await import('../adapters/local/local-secret-vault.ts');
  return LocalSecretVault.open(store, join(config.dataDir, VAULT_KEY_FILE));
}

/**
 * The AWS vault is built on first use: most Lambdas never touch secret values, and this keeps the
 * Secrets Manager client out of their cold start.
 */
export async function createAwsVault(config: Config): Promise<SecretVault> {
  if (config.mode !== 'aws') throw new Error('The Secrets Manager vault runs only in PLATFORM_MODE=aws');
  return lazyPort<SecretVault>()(
    async () => {
      const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
      const { SecretsManagerVault } = await import('../adapters/aws/secrets-manager-vault.ts');
      return new SecretsManagerVault({
        prefix: config.secretsPrefix,
        kmsKeyId: config.secretsKmsKeyId,
        client: new SecretsManagerClient({ region: config.awsRegion }),
      });
    },
    ['putValue', 'deleteValue', 'resolve'],
    {},
  );
}

export async function createFileBundles(config: Config): Promise<BundleStore> {
  if (config.mode !== 'local') throw new Error('The file bundle store runs only in PLATFORM_MODE=local');
  const { FileBundleStore } = await import('../adapters/local/file-bundle-store.ts');
  return new FileBundleStore(config.dataDir);
}

/** Built on first use, like the vault: most Lambdas never touch bundles (see lib/module-access.ts). */
export async function createS3Bundles(config: Config): Promise<BundleStore> {
  if (config.mode !== 'aws') throw new Error('The S3 bundle store runs only in PLATFORM_MODE=aws');
  return lazyPort<BundleStore>()(
    async () => {
      if (!config.bundleBucket)
        throw new Error('PLATFORM_BUNDLE_BUCKET is not set: this function has no bundle bucket');
      const { S3Client } = await import('@aws-sdk/client-s3');
      const { S3BundleStore } = await import('../adapters/aws/s3-bundle-store.ts');
      return new S3BundleStore({
        bucket: config.bundleBucket,
        kmsKeyId: config.bundleKmsKeyId,
        client: new S3Client({ region: config.awsRegion }),
      });
    },
    ['put', 'get', 'delete'],
    {
      // Signing needs no S3 client: the read-only paths (the public directory) never load it.
      downloadUrl: async (key, ttl) => {
        assertBundleKey(key);
        assertDownloadUrlTtl(ttl);
        if (!config.bundleBucket || !config.awsRegion) {
          throw new Error('PLATFORM_BUNDLE_BUCKET and AWS_REGION are needed to sign bundle download URLs');
        }
        const { presignS3Get } = await import('../adapters/aws/s3-presign.ts');
        return presignS3Get({
          bucket: config.bundleBucket,
          key,
          region: config.awsRegion,
          expiresIn: ttl,
          endpoint: config.s3Endpoint,
        });
      },
    },
  );
}

/** The Vercel AI SDK gateway, built on the first model call: only the calls Lambda ever makes one. */
export function createLlmGateway(config: Config): LlmGateway {
  return lazyPort<LlmGateway>()(
    async () => {
      // In AWS the keys live in Secrets Manager (the stack's provider-keys secret), never in the
      // function's environment: read once per container, on the first model call.
      let llm = config.llm;
      if (config.llmSecretArn) {
        const { readSecretString } = await import('../adapters/aws/secret-json.ts');
        llm = withProviderSecret(llm, await readSecretString(config.llmSecretArn, config.awsRegion));
      }
      const { AiSdkGateway } = await import('../adapters/llm/ai-sdk-gateway.ts');
      return new AiSdkGateway(llm);
    },
    ['generate', 'runToolLoop'],
    {},
  );
}

/**
 * Where user code runs, built on the first sandboxed run. Locally: bubblewrap, or plain child
 * processes only when PLATFORM_SANDBOX=unisolated says so; in AWS: ECS Fargate.
 */
export function createSandbox(config: Config): Sandbox {
  const kind = config.sandbox;
  const build = async (): Promise<Sandbox> => {
    if (kind === 'ecs') {
      if (config.mode !== 'aws') throw new Error('PLATFORM_SANDBOX=ecs runs only in PLATFORM_MODE=aws');
      const { createEcsSandbox } = await import('../adapters/aws/ecs-sandbox.ts');
      return createEcsSandbox(config);
    }
    if (config.mode !== 'local') throw new Error(`PLATFORM_SANDBOX=${kind} runs only in PLATFORM_MODE=local`);
    const { BwrapSandbox, UnisolatedSandbox } = await import('../adapters/local/bwrap/sandboxes.ts');
    const runsDir = join(config.dataDir, 'runs');
    return kind === 'unisolated' ? new UnisolatedSandbox({ runsDir }) : new BwrapSandbox({ runsDir });
  };
  let instance: Promise<Sandbox> | undefined;
  return {
    kind,
    // As the adapter built later says (bwrap/sandboxes.ts): only bubblewrap gives egress its own network.
    ownNetwork: kind === 'bubblewrap',
    egress: kind !== 'ecs',
    openSession: async (spec) => {
      instance ??= build();
      return (await instance).openSession(spec);
    },
  };
}

/**
 * Locally the in-process loop (jobs/local-schedule-loop.ts) reads the stored records; `sync` and
 * `remove` only wake it so a change takes effect at once.
 */
export class LocalScheduler implements Scheduler {
  readonly kind = 'local' as const;
  readonly ownsNextRun = true;
  onChange: (() => void) | undefined;
  async sync(): Promise<void> {
    this.onChange?.();
  }
  async remove(): Promise<void> {
    this.onChange?.();
  }
}

/** EventBridge Scheduler, built on first use: only the schedules Lambda changes timetables. */
export function createEventBridgeScheduler(config: Config): Scheduler {
  return lazyPort<Scheduler>()(
    async () => {
      if (!config.scheduleGroup)
        throw new Error('PLATFORM_SCHEDULE_GROUP is not set: this function has no schedule group');
      const { SchedulerClient } = await import('@aws-sdk/client-scheduler');
      const { EventBridgeScheduler } = await import('../adapters/aws/eventbridge-scheduler.ts');
      const { scheduleTargetArn: arn, scheduleRoleArn: roleArn, scheduleDlqArn: deadLetterArn } = config;
      return new EventBridgeScheduler({
        client: new SchedulerClient({ region: config.awsRegion }),
        groupName: config.scheduleGroup,
        ...(arn && roleArn && deadLetterArn ? { target: { arn, roleArn, deadLetterArn } } : {}),
      });
    },
    ['sync', 'remove'],
    { kind: 'eventbridge', ownsNextRun: false },
  );
}

/** Alerts: delivered in this process locally; through the alert-delivery Lambda in AWS. */
export async function createNotifier(config: Config, logger: Logger): Promise<Notifier> {
  const log = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) =>
    logger[level](message, fields);
  if (config.mode === 'local') {
    const { BackgroundNotifier } = await import('../adapters/local/background-notifier.ts');
    return new BackgroundNotifier({ mode: 'local' }, log);
  }
  return lazyPort<Notifier>()(
    async () => {
      if (!config.alertsFunction)
        throw new Error('PLATFORM_ALERTS_FUNCTION is not set: this function cannot queue alerts');
      const { LambdaClient } = await import('@aws-sdk/client-lambda');
      const { LambdaNotifier } = await import('../adapters/aws/lambda-notifier.ts');
      return new LambdaNotifier({
        client: new LambdaClient({ region: config.awsRegion }),
        functionName: config.alertsFunction,
        policy: { mode: 'aws' },
      });
    },
    ['enqueue'],
    {
      // Sending and checking need no Lambda client (test alerts, saving a schedule).
      deliver: (delivery) => sendAlertNow('aws', delivery),
      checkUrl: (url) => checkAlertUrl('aws', url),
      drain: async () => undefined,
    },
  );
}

/**
 * Always-on services: locally a host of supervised sandboxed processes behind gateways; in AWS,
 * ECS services behind the stack's load balancer, or, when the stack was deployed without a
 * services domain (no PLATFORM_SERVICES_* settings), a runner that refuses deploys and says why.
 */
export async function createServiceRunner(
  config: Config,
  sandbox: Sandbox,
  logger: Logger,
): Promise<ServiceRunner> {
  if (config.mode === 'local') {
    const { LocalServiceHost } = await import('../adapters/local/local-service-host.ts');
    return new LocalServiceHost({
      sandbox,
      host: config.host,
      hostLoopbackPorts: config.sandboxHostPorts,
      healthyMs: config.serviceHealthyMs,
      startTimeoutMs: config.serviceStartTimeoutMs,
      log: (level, message, fields) => logger[level](message, fields),
    });
  }
  const c = config.services;
  const missing = [
    ['PLATFORM_SERVICES_CLUSTER', c.cluster],
    ['PLATFORM_SERVICES_SUBNETS', c.subnets.join(',')],
    ['PLATFORM_SERVICES_SECURITY_GROUPS', c.securityGroups.join(',')],
    ['PLATFORM_SERVICES_EXECUTION_ROLE_ARN', c.executionRoleArn],
    ['PLATFORM_SERVICES_LISTENER_ARN', c.listenerArn],
    ['PLATFORM_SERVICES_VPC_ID', c.vpcId],
    ['PLATFORM_SERVICES_DOMAIN', c.domain],
    ['PLATFORM_SERVICES_LOG_GROUP', c.logGroup],
    ['PLATFORM_SERVICES_IMAGE', c.image],
    ['PLATFORM_SERVICES_GATEWAY_FILE', c.gatewayFile],
    ['PLATFORM_SERVICES_LAUNCHER_FILE', c.launcherFile],
    ['PLATFORM_BUNDLE_BUCKET', config.bundleBucket],
    ['AWS_REGION', config.awsRegion],
  ]
    .filter(([, v]) => !v)
    .map(([n]) => n as string);
  if (missing.length > 0) {
    const reason = `Always-on services are not set up on this deployment (${missing.join(', ')} not set; docs/services.md)`;
    const refuse = async (): Promise<never> => {
      throw new PlatformError('UNPROCESSABLE', reason);
    };
    return {
      kind: 'ecs',
      fetchesBundle: true,
      unavailableReason: reason,
      bind: () => undefined,
      start: refuse,
      stop: async () => undefined,
      close: async () => undefined,
    };
  }
  const account = /^arn:[^:]+:iam::(\d{12}):/.exec(c.executionRoleArn as string)?.[1] ?? '';
  const partition = /^arn:([^:]+):/.exec(c.executionRoleArn as string)?.[1] ?? 'aws';
  return lazyPort<ServiceRunner>()(
    async () => {
      const [
        { ECSClient },
        { ElasticLoadBalancingV2Client },
        { ApplicationAutoScalingClient },
        { CloudWatchLogsClient },
      ] = await Promise.all([
        import('@aws-sdk/client-ecs'),
        import('@aws-sdk/client-elastic-load-balancing-v2'),
        import('@aws-sdk/client-application-auto-scaling'),
        import('@aws-sdk/client-cloudwatch-logs'),
      ]);
      const { EcsServiceRunner } = await import('../adapters/aws/ecs-service-runner.ts');
      const region = config.awsRegion;
      // The task programs, bundled into this function's asset (lib/container-programs.ts).
      const program = (file: string) =>
        readFile(file, 'utf8').catch((err: Error) => {
          throw new Error(`A service task program cannot be read from ${file}: ${err.message}`);
        });
      const [gatewaySource, launcherSource] = await Promise.all([
        program(c.gatewayFile as string),
        program(c.launcherFile as string),
      ]);
      return new EcsServiceRunner({
        ecs: new ECSClient({ region }),
        elb: new ElasticLoadBalancingV2Client({ region }),
        autoscaling: new ApplicationAutoScalingClient({ region }),
        logs: new CloudWatchLogsClient({ region }),
        cluster: c.cluster as string,
        subnets: c.subnets,
        securityGroups: c.securityGroups,
        executionRoleArn: c.executionRoleArn as string,
        listenerArn: c.listenerArn as string,
        vpcId: c.vpcId as string,
        domain: c.domain as string,
        urlScheme: c.urlScheme,
        ...(c.urlPort !== undefined ? { urlPort: c.urlPort } : {}),
        logGroup: c.logGroup as string,
        region: region as string,
        image: c.image as string,
        secretsPrefix: config.secretsPrefix,
        account,
        partition,
        gatewaySource,
        launcherSource,
        bucket: config.bundleBucket as string,
        s3Endpoint: config.s3Endpoint,
      });
    },
    ['start', 'stop', 'logs'],
    {
      kind: 'ecs',
      fetchesBundle: true,
      bind: () => undefined,
      close: async () => undefined,
    },
  );
}

/**
 * Payments, built on first use (only the billing routes take payments): local checkout pages, or
 * Stripe with keys from the environment or, in AWS, from the Secrets Manager secret the stack made.
 */
export function createPayments(config: Config): Payments {
  const p = config.payments;
  if (p.kind === 'local') {
    return lazyPort<Payments>()(
      async () => {
        const { LocalPayments } = await import('../adapters/local/local-payments.ts');
        return new LocalPayments(config.publicUrl ?? `http://${config.host}:${config.port}`);
      },
      ['createCheckout', 'parseWebhook'],
      { kind: 'local', hostsCheckoutPage: true },
    );
  }
  return lazyPort<Payments>()(
    async () => {
      let secretKey = p.stripeSecretKey;
      let webhookSecret = p.stripeWebhookSecret;
      if ((!secretKey || !webhookSecret) && p.stripeSecretArn) {
        const { readSecretString } = await import('../adapters/aws/secret-json.ts');
        const parsed = JSON.parse(await readSecretString(p.stripeSecretArn, config.awsRegion)) as {
          secret_key?: string;
          webhook_secret?: string;
        };
        secretKey ??= parsed.secret_key;
        webhookSecret ??= parsed.webhook_secret;
      }
      if (!secretKey || !webhookSecret || secretKey.startsWith('REPLACE')) {
        throw new PlatformError(
          'UNPROCESSABLE',
          'Payments are not set up on this deployment: add the Stripe keys (docs/billing.md)',
        );
      }
      const { StripePayments } = await import('../adapters/aws/stripe-payments.ts');
      const api = p.stripeApiBase ? new URL(p.stripeApiBase) : undefined;
      return new StripePayments({
        secretKey,
        webhookSecret,
        ...(api
          ? {
              api: {
                host: api.hostname,
                port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
                protocol: api.protocol === 'https:' ? 'https' : 'http',
              },
            }
          : {}),
      });
    },
    ['createCheckout', 'parseWebhook'],
    { kind: 'stripe', hostsCheckoutPage: false },
  );
}
