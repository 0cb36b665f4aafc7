/**
 * The ECS sandbox's settings (functions/adapters/aws/ecs-sandbox.ts): the options the adapter is
 * built with, and the context each of its sessions runs with (the same, clients resolved). Their
 * own file because the session, the run's staging, the task and the result reading all read them.
 */
import type { ECSClient } from '@aws-sdk/client-ecs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { IdleWaitBounds } from './runner-idle-wait.ts';
import type { WarmRunnerPool } from './warm-runner-pool.ts';

/** Fargate's quickest task start (20 s; 20 to 60 s is usual): what a run must have left to start one. */
export const FARGATE_TASK_START_MS = 20_000;

/** The warm runner pool's floor and ceiling where CDK context gives none (docs/sandbox-aws.md). */
export const WARM_POOL_SIZE = { min: 2, max: 10 } as const;

export type Presign = ((method: 'GET' | 'PUT', key: string, ttlSeconds: number) => Promise<string>) & {
  /**
   * When the signing credentials expire (epoch ms), if they do: a presigned URL stops working then,
   * whatever its own expiry (a role's temporary credentials). Undefined: not known, or never.
   */
  credentialsExpireAt?: () => Promise<number | undefined>;
};

export interface EcsSandboxOptions {
  /** Cluster name or ARN (PLATFORM_SANDBOX_CLUSTER). */
  cluster: string;
  /** Task definition ARN, with its revision (PLATFORM_SANDBOX_TASK_DEFINITION). */
  taskDefinition: string;
  /** Isolated subnets (PLATFORM_SANDBOX_SUBNETS). */
  subnets: string[];
  /** PLATFORM_SANDBOX_SECURITY_GROUPS. */
  securityGroups: string[];
  /** The bundle bucket, which holds the sandbox-inputs/ and sandbox-results/ objects. */
  bucket: string;
  region: string;
  ecs?: ECSClient;
  /** For the inputs and result objects. */
  s3?: S3Client;
  /** Presigned URL maker. @default createS3Presigner for the bucket, with this role's credentials */
  presign?: Presign;
  /** First wait between polls of an exec's result object; it grows by half each time up to maxPollMs. The runner polls for commands the same way. @default 100 */
  pollMs?: number;
  /** @default 250 */
  maxPollMs?: number;
  /** How often, while waiting for a result, DescribeTasks checks that the task still runs. @default 2000 */
  describeMs?: number;
  /** Commands (execs, and the file operations, which are execs) one session can run. @default 200 */
  maxExecs?: number;
  /**
   * The runner, bundled (lib/container-programs.ts): uploaded with each run's inputs as
   * `runner.cjs`, which the task's bootstrap downloads and runs.
   */
  runnerSource: string;
  /**
   * The customer-managed KMS key (ARN) a run's inputs are written under (ecs-sandbox-staging.ts,
   * putRunObject). @default '' (the bucket's own encryption: tests of the adapter alone)
   */
  inputsKey?: string;
  /** Warm runners (docs/sandbox-aws.md, "Warm runners"); without them every run starts its own task. */
  warm?: WarmRunners;
  /**
   * The unbound runners on Fargate Spot (`-c sandboxSpot=on`, PLATFORM_SANDBOX_SPOT), on-demand
   * when Spot has no capacity or its quota is reached. @default false
   */
  spot?: boolean;
  /** How often a run that waits for a runner (past the ceiling or the quota) tries again, ms. @default 1000 */
  capacityPollMs?: number;
  /**
   * How long a task takes to start, ms: a run with less time left than this (and a margin) starts
   * none, which could only time out, and answers 503 with Retry-After. @default FARGATE_TASK_START_MS
   */
  taskStartMs?: number;
}

/** The warm runner pool and how its runners live. */
export interface WarmRunners {
  pool: WarmRunnerPool;
  /** An unbound runner exits when no claim comes this long after its start. @default 10 minutes */
  idleMs: number;
  /** A bound runner's wait for its pair's next run, between these, by the pair's traffic (runner-idle-wait.ts). */
  boundIdle: IdleWaitBounds;
  /** Runs one runner serves at most. @default 50 */
  claimSlots: number;
  /** The most a runner lives: its presigned URLs expire then. @default 50 minutes */
  lifetimeMs: number;
}

/** What a session runs with: the options, with the clients and presigner resolved. */
export interface SessionContext extends Required<Omit<EcsSandboxOptions, 'ecs' | 's3' | 'presign' | 'warm'>> {
  warm: WarmRunners | undefined;
  ecs: ECSClient;
  s3: () => Promise<S3Client>;
  presign: Presign;
}
