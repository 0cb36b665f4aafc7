import { readFile } from 'node:fs/promises';
import { assertBundleKey, assertDownloadUrlTtl, type BundleStore } from '../ports/bundle-store.ts';
import { type Clock, epochSeconds } from '../ports/clock.ts';
import { type Config, DEPLOYMENT_SETTINGS } from '../ports/config.ts';
import type { Notifier } from '../ports/notifier.ts';
import type { Payments } from '../ports/payments.ts';
import type { RunWorker } from '../ports/run-worker.ts';
import type { Sandbox } from '../ports/sandbox.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { SecretVault } from '../ports/secret-vault.ts';
import type { ServiceRunner } from '../ports/service-runner.ts';
import type { Store } from '../ports/store.ts';
import { ENV } from '../shared/env-names.ts';
import { PlatformError } from '../shared/errors.ts';
import { checkAlertUrl, outboundRules, sendAlertNow } from './alert-sender.ts';
import { assertMode } from './config.ts';
import { LAZY_MODULES } from './lazy-modules.ts';
import { lazyPort } from './lazy-port.ts';

/**
 * The AWS deployment's adapters (PLATFORM_MODE=aws): DynamoDB, Secrets Manager, S3, the ECS
 * sandbox, EventBridge Scheduler, the alert-delivery Lambda, ECS services, and Stripe (also what
 * the local deployment uses with PLATFORM_PAYMENTS=stripe). All but the store are built on first
 * use through LAZY_MODULES, so a Lambda loads only the clients it calls (lib/lambda-bundling.ts).
 */

export async function createAwsStore(config: Config, clock: Clock): Promise<Store> {
  if (config.mode !== 'aws' || !config.tableName) {
    throw new Error(`The DynamoDB store runs only in ${ENV.mode}=aws with ${ENV.tableName} set`);
  }
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDbStore } = await LAZY_MODULES.dynamodbStore();
  const client = new DynamoDBClient({
    region: config.awsRegion,
    ...(config.dynamodbEndpoint ? { endpoint: config.dynamodbEndpoint } : {}),
  });
  return new DynamoDbStore({ tableName: config.tableName, client, nowSeconds: () => epochSeconds(clock) });
}

/**
 * The AWS vault is built on first use: most Lambdas never touch secret values, and this keeps the
 * Secrets Manager client out of their cold start.
 */
export async function createAwsVault(config: Config): Promise<SecretVault> {
  assertMode(config, 'aws', 'The Secrets Manager vault');
  return lazyPort<SecretVault>()(
    async () => {
      const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
      const { SecretsManagerVault } = await LAZY_MODULES.secretsManagerVault();
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

/** Built on first use, like the vault: most Lambdas never touch bundles (see lib/module-access.ts). */
export async function createS3Bundles(config: Config): Promise<BundleStore> {
  assertMode(config, 'aws', 'The S3 bundle store');
  return lazyPort<BundleStore>()(
    async () => {
      if (!config.bundleBucket)
        throw new Error(`${ENV.bundleBucket} is not set: this function has no bundle bucket`);
      const { S3Client } = await import('@aws-sdk/client-s3');
      const { S3BundleStore } = await LAZY_MODULES.s3BundleStore();
      return new S3BundleStore({
        bucket: config.bundleBucket,
        kmsKeyId: config.bundleKmsKeyId,
        client: new S3Client({ region: config.awsRegion }),
      });
    },
    ['put', 'delete'],
    {
      // Reading is a presigned GET too, so a module that only reads (the schedules module reading
      // a run's output stored apart) needs no S3 client in its bundle (lib/lambda-bundling.ts).
      get: (key) => fetchBundle(config, key),
      // Signing needs no S3 client: the read-only paths (the public directory) never load it.
      downloadUrl: (key, ttl) => presignBundleGet(config, key, ttl),
      // A client fetches a large output from S3 itself: the same presigned GET.
      shareUrl: (key, ttl) => presignBundleGet(config, key, ttl),
    },
  );
}

/** The bytes at a key through a presigned GET (this role's s3:GetObject), or undefined on a 404. */
async function fetchBundle(config: Config, key: string): Promise<Buffer | undefined> {
  const res = await fetch(await presignBundleGet(config, key, 60));
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`reading ${key} from the bundle bucket: S3 answered ${res.status}`);
  }
  return Buffer.from(await res.arrayBuffer());
}

async function presignBundleGet(config: Config, key: string, ttl: number): Promise<string> {
  assertBundleKey(key);
  assertDownloadUrlTtl(ttl);
  if (!config.bundleBucket || !config.awsRegion) {
    throw new Error(`${ENV.bundleBucket} and ${ENV.awsRegion} are needed to sign bundle download URLs`);
  }
  const { presignS3Get } = await LAZY_MODULES.s3Presign();
  return presignS3Get({
    bucket: config.bundleBucket,
    key,
    region: config.awsRegion,
    expiresIn: ttl,
    endpoint: config.s3Endpoint,
  });
}

/** The ECS sandbox (ECS RunTask), for PLATFORM_SANDBOX=ecs. */
export async function buildEcsSandbox(config: Config): Promise<Sandbox> {
  assertMode(config, 'aws', `${ENV.sandbox}=ecs`);
  const { createEcsSandbox } = await LAZY_MODULES.ecsSandbox();
  return createEcsSandbox(config);
}

/**
 * The ECS sandbox's run objects that sessions which never closed left, deleted (housekeeping:
 * adapters/aws/run-object-sweep.ts). It needs the bucket only, not the sandbox's settings: the
 * housekeeping function starts no task.
 */
export async function sweepEcsRunObjects(config: Config, now: Date): Promise<number> {
  assertMode(config, 'aws', 'The sweep of ECS run objects');
  const bucket = config.bundleBucket;
  if (!bucket) return 0;
  const { S3Client } = await import('@aws-sdk/client-s3');
  const { sweepRunObjects } = await LAZY_MODULES.runObjectSweep();
  const client = new S3Client({ region: config.awsRegion });
  try {
    return await sweepRunObjects({ bucket, s3: async () => client }, now);
  } finally {
    client.destroy();
  }
}

/** EventBridge Scheduler, built on first use: only the schedules Lambda changes timetables. */
export function createEventBridgeScheduler(config: Config): Scheduler {
  return lazyPort<Scheduler>()(
    async () => {
      if (!config.scheduleGroup)
        throw new Error(`${ENV.scheduleGroup} is not set: this function has no schedule group`);
      const { SchedulerClient } = await import('@aws-sdk/client-scheduler');
      const { EventBridgeScheduler } = await LAZY_MODULES.eventBridgeScheduler();
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

/** Alerts, queued to the alert-delivery Lambda on first use. */
export function createAwsNotifier(config: Config): Notifier {
  return lazyPort<Notifier>()(
    async () => {
      if (!config.alertsFunction)
        throw new Error(`${ENV.alertsFunction} is not set: this function cannot queue alerts`);
      const { LambdaClient } = await import('@aws-sdk/client-lambda');
      const { LambdaNotifier } = await LAZY_MODULES.lambdaNotifier();
      return new LambdaNotifier({
        client: new LambdaClient({ region: config.awsRegion }),
        functionName: config.alertsFunction,
        policy: outboundRules(config),
      });
    },
    ['enqueue'],
    {
      // Sending and checking need no Lambda client (test alerts, saving a schedule).
      deliver: (delivery) => sendAlertNow(config, delivery),
      checkUrl: (url) => checkAlertUrl(config, url),
      drain: async () => undefined,
    },
  );
}

/** The run worker (ports/run-worker.ts), its Lambda client built on the first hand-over. */
export function createLambdaRunWorker(config: Config, functionName: string): RunWorker {
  return lazyPort<RunWorker>()(
    async () => {
      const { LambdaClient } = await import('@aws-sdk/client-lambda');
      const { LambdaRunWorker } = await LAZY_MODULES.lambdaRunWorker();
      return new LambdaRunWorker({ client: new LambdaClient({ region: config.awsRegion }), functionName });
    },
    ['start'],
    {},
  );
}

/**
 * Always-on services: ECS services behind the stack's load balancer, or, when the stack was
 * deployed without a services domain (no PLATFORM_SERVICES_* settings), a runner that refuses
 * deploys and says why. The settings come all or none (DEPLOYMENT_SETTINGS, checked at start).
 */
export function createEcsServiceRunner(config: Config): ServiceRunner {
  const c = config.services;
  // The settings come together (checked at start): without the cluster, none of them is set.
  const { all, needs } = DEPLOYMENT_SETTINGS.aws.together.services;
  const missing = c.cluster ? [] : [...all, ...needs.filter((k) => !config[k])].map((k) => ENV[k]);
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
      const { EcsServiceRunner } = await LAZY_MODULES.ecsServiceRunner();
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

/** Stripe, with keys from the environment or, in AWS, from the Secrets Manager secret the stack made. */
export function createStripePayments(config: Config): Payments {
  const p = config.payments;
  return lazyPort<Payments>()(
    async () => {
      let secretKey = p.stripeSecretKey;
      let webhookSecret = p.stripeWebhookSecret;
      if ((!secretKey || !webhookSecret) && p.stripeSecretArn) {
        const { readSecretString } = await LAZY_MODULES.secretJson();
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
      const { StripePayments } = await LAZY_MODULES.stripePayments();
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
