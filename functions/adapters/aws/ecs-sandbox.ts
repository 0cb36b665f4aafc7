import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECSClient } from '@aws-sdk/client-ecs';
import type { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEPLOYMENT_SETTINGS } from '../../ports/config.ts';
import {
  type Sandbox,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';
import { ENV } from '../../shared/env-names.ts';
import { askConsumedCapacity } from './dynamodb-consumed-capacity.ts';
import {
  type EcsSandboxOptions,
  FARGATE_TASK_START_MS,
  type Presign,
  type SessionContext,
  WARM_POOL_SIZE,
  type WarmRunners,
} from './ecs-sandbox-options.ts';
import { safeRelativePath } from './ecs-sandbox-paths.ts';
import { EcsSession } from './ecs-sandbox-session.ts';
import { createS3Presigner, putRunObject } from './ecs-sandbox-staging.ts';
import { topUpPool } from './ecs-sandbox-warm.ts';
import { IDLE_WAIT_BOUNDS } from './runner-idle-wait.ts';
import { WarmRunnerPool } from './warm-runner-pool.ts';

/**
 * The Sandbox port on ECS Fargate (docs/sandbox-aws.md). A session is one long-lived Fargate task
 * of the sandbox task definition (lib/constructs/sandbox-cluster.ts): no task role, no public IP,
 * in isolated subnets whose only way out is the S3 gateway endpoint. The task is started by the
 * session's first exec, readFile or listFiles (files written before it are staged and uploaded
 * with it); its only override is the presigned GET URL of the run manifest, which holds the env,
 * the bundle's and files' URLs, and maxExecs (200) pairs of presigned URLs (one PUT URL for a run whose first command is its last, as a tool's is): GET for the command object
 * `sandbox-inputs/<runId>/exec-<n>.json`, PUT for its result `sandbox-results/<runId>/exec-<n>.json`.
 * The runner (functions/containers/sandbox-runner.ts, bundled; the task's entry point,
 * RUNNER_BOOTSTRAP, downloads it with the manifest) unpacks the working directory, then
 * polls for command n, runs it as an unprivileged user and PUTs its result, until a stop command
 * or the deadline. An exec writes the next command object and polls for its result; readFile,
 * writeFile and listFiles are execs of small shell commands; close writes the stop command.
 */

/**
 * What createEcsSandbox reads from the platform's config (functions/platform/config.ts): the
 * region and bundle bucket every Lambda has, and the four PLATFORM_SANDBOX_* variables the stack
 * gives the calls function (subnets and security groups comma-separated, or already split).
 */
export interface EcsSandboxConfig {
  awsRegion: string | undefined;
  bundleBucket: string | undefined;
  sandboxCluster?: string | undefined;
  sandboxTaskDefinition?: string | undefined;
  sandboxSubnets?: string[] | string | undefined;
  sandboxSecurityGroups?: string[] | string | undefined;
  /** The bundled runner's file (PLATFORM_SANDBOX_RUNNER_FILE: in the function's own asset). */
  sandboxRunnerFile?: string | undefined;
  /** The KMS key a run's inputs are written under (PLATFORM_SANDBOX_INPUTS_KEY). */
  sandboxInputsKey?: string | undefined;
  /** Warm runners: the pool's floor and ceiling (PLATFORM_SANDBOX_POOL_MIN, _MAX), and its table. */
  sandboxPoolMin?: number | undefined;
  sandboxPoolMax?: number | undefined;
  /** A bound runner's shortest wait for its pair's next run, ms (PLATFORM_SANDBOX_IDLE_MIN_MS). */
  sandboxIdleMinMs?: number | undefined;
  /** The unbound runners on Fargate Spot (PLATFORM_SANDBOX_SPOT, from `-c sandboxSpot=on`). */
  sandboxSpot?: boolean | undefined;
  /** How long a task takes to start, ms (PLATFORM_SANDBOX_TASK_START_MS). @default 20000 */
  sandboxTaskStartMs?: number | undefined;
  tableName?: string | undefined;
  dynamodbEndpoint?: string | undefined;
}

/** A warm runner's life (docs/sandbox-aws.md, "Warm runners"). */
export const WARM_RUNNER_DEFAULTS = {
  idleMs: 10 * 60_000,
  boundIdle: IDLE_WAIT_BOUNDS,
  claimSlots: 50,
  // Its presigned URLs are signed with the function's role credentials, which last about an hour.
  lifetimeMs: 50 * 60_000,
};

/** The pool, when the stack sized one (PLATFORM_SANDBOX_POOL_MAX) and the table is known. */
function warmRunners(config: EcsSandboxConfig): WarmRunners | undefined {
  if (!config.sandboxPoolMax || !config.tableName) return undefined;
  const client = new DynamoDBClient({
    region: config.awsRegion,
    ...(config.dynamodbEndpoint ? { endpoint: config.dynamodbEndpoint } : {}),
  });
  // The pool's reads and writes are metered like the store's (docs/performance.md, "AWS cost").
  askConsumedCapacity(client);
  const pool = new WarmRunnerPool({
    doc: DynamoDBDocumentClient.from(client),
    tableName: config.tableName,
    floor: Math.min(config.sandboxPoolMin ?? WARM_POOL_SIZE.min, config.sandboxPoolMax),
    ceiling: config.sandboxPoolMax,
  });
  const boundIdle =
    config.sandboxIdleMinMs === undefined
      ? IDLE_WAIT_BOUNDS
      : { ...IDLE_WAIT_BOUNDS, minMs: Math.min(config.sandboxIdleMinMs, IDLE_WAIT_BOUNDS.maxMs) };
  return { pool, ...WARM_RUNNER_DEFAULTS, boundIdle };
}

/** The adapter from config; a missing setting is a SandboxUnavailableError naming its variable. */
export function createEcsSandbox(config: EcsSandboxConfig): EcsSandbox {
  const list = (value: string[] | string | undefined) =>
    (typeof value === 'string' ? value.split(',') : (value ?? [])).map((s) => s.trim()).filter(Boolean);
  // The settings the stack gives the calls function together (DEPLOYMENT_SETTINGS, checked at start).
  const { all, needs } = DEPLOYMENT_SETTINGS.aws.together.sandbox;
  const given = (k: (typeof all)[number] | (typeof needs)[number]) =>
    k === 'sandboxSubnets' || k === 'sandboxSecurityGroups' ? list(config[k]).length > 0 : Boolean(config[k]);
  const missing = [...needs, ...all].filter((k) => !given(k)).map((k) => ENV[k]);
  if (missing.length > 0) {
    throw new SandboxUnavailableError(`The ECS sandbox is not configured: ${missing.join(', ')} not set`);
  }
  return new EcsSandbox({
    cluster: config.sandboxCluster as string,
    taskDefinition: config.sandboxTaskDefinition as string,
    subnets: list(config.sandboxSubnets),
    securityGroups: list(config.sandboxSecurityGroups),
    bucket: config.bundleBucket as string,
    region: config.awsRegion as string,
    runnerSource: readRunner(config.sandboxRunnerFile as string),
    inputsKey: config.sandboxInputsKey as string,
    warm: warmRunners(config),
    spot: config.sandboxSpot ?? false,
    ...(config.sandboxTaskStartMs !== undefined ? { taskStartMs: config.sandboxTaskStartMs } : {}),
  });
}

function readRunner(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new SandboxUnavailableError(
      `The ECS sandbox's runner cannot be read from ${file}: ${(err as Error).message}`,
    );
  }
}

/**
 * The S3 client and presigner are loaded on first use: lib/lambda-bundling.ts leaves them out of
 * the bundles of modules without read-write bundle access, so no static import may name them.
 */
const s3Sdk = () => import('@aws-sdk/client-s3');

/** Run ids name S3 keys, the task's startedBy and its RunTask clientToken (64 characters at most). */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class EcsSandbox implements Sandbox {
  readonly kind = 'ecs' as const;
  readonly egress = false;
  /** Tasks run in the VPC, not on this host: there is no host loopback to keep them from, nor to publish on. */
  readonly ownNetwork = false;
  private readonly options: Required<Omit<EcsSandboxOptions, 'ecs' | 's3' | 'presign' | 'warm'>>;
  private readonly warm: EcsSandboxOptions['warm'];
  private readonly ecs: ECSClient;
  private readonly s3: () => Promise<S3Client>;
  private readonly presign: Presign;

  constructor(options: EcsSandboxOptions) {
    for (const [name, value] of [
      ['cluster', options.cluster],
      ['taskDefinition', options.taskDefinition],
      ['bucket', options.bucket],
      ['region', options.region],
    ] as const) {
      if (!value) throw new SandboxUnavailableError(`ECS sandbox: ${name} is not configured`);
    }
    if (options.maxExecs !== undefined && !(Number.isInteger(options.maxExecs) && options.maxExecs >= 1)) {
      throw new Error('ECS sandbox: maxExecs must be a positive integer');
    }
    if (options.subnets.length === 0 || options.securityGroups.length === 0) {
      throw new SandboxUnavailableError('ECS sandbox: subnets and security groups are not configured');
    }
    this.options = {
      cluster: options.cluster,
      taskDefinition: options.taskDefinition,
      subnets: [...options.subnets],
      securityGroups: [...options.securityGroups],
      bucket: options.bucket,
      region: options.region,
      pollMs: options.pollMs ?? 100,
      maxPollMs: options.maxPollMs ?? 250,
      describeMs: options.describeMs ?? 2000,
      maxExecs: options.maxExecs ?? 200,
      runnerSource: options.runnerSource,
      inputsKey: options.inputsKey ?? '',
      spot: options.spot ?? false,
      capacityPollMs: options.capacityPollMs ?? 1000,
      taskStartMs: options.taskStartMs ?? FARGATE_TASK_START_MS,
    };
    this.warm = options.warm;
    this.ecs = options.ecs ?? new ECSClient({ region: options.region });
    let s3 = options.s3;
    this.s3 = async () => {
      s3 ??= new (await s3Sdk()).S3Client({ region: options.region });
      return s3;
    };
    this.presign = options.presign ?? createS3Presigner({ bucket: options.bucket, region: options.region });
  }

  /** Tops the warm runner pool up to its floor (docs/sandbox-aws.md, "Warm runners"). */
  async prepare(): Promise<number> {
    if (!this.warm) return 0;
    const ctx = this.context();
    const put = async (key: string, body: Buffer, contentType: string) => {
      await putRunObject(ctx, key, body, contentType);
    };
    return topUpPool(ctx, this.warm, put);
  }

  private context(): SessionContext {
    return { ...this.options, warm: this.warm, ecs: this.ecs, s3: this.s3, presign: this.presign };
  }

  async openSession(spec: SessionSpec): Promise<SandboxSession> {
    if (!RUN_ID.test(spec.runId)) {
      throw new Error(`ECS sandbox: run id must match ${RUN_ID} (it names S3 keys and the task)`);
    }
    if (spec.network !== 'none') {
      // No NAT in the sandbox VPC: a run cannot get outbound internet access on ECS (yet).
      throw new SandboxUnavailableError(
        `network "${spec.network}" is not supported by the ECS sandbox: its VPC has no way out (docs/sandbox-aws.md)`,
      );
    }
    const files = new Map<string, Buffer>();
    for (const f of spec.files ?? []) files.set(safeRelativePath(f.path), f.data);
    return new EcsSession(this.context(), spec, files);
  }
}
