import { readFileSync } from 'node:fs';
import {
  DescribeTasksCommand,
  ECSClient,
  RunTaskCommand,
  type RunTaskCommandInput,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import type { GetObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import {
  type ExecResult,
  type Sandbox,
  type SandboxLimits,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';

/**
 * The Sandbox port on ECS Fargate (docs/sandbox-aws.md). A session is one long-lived Fargate task
 * of the sandbox task definition (lib/constructs/sandbox-cluster.ts): no task role, no public IP,
 * in isolated subnets whose only way out is the S3 gateway endpoint. The task is started by the
 * session's first exec, readFile or listFiles (files written before it are staged and uploaded
 * with it); its only override is the presigned GET URL of the run manifest, which holds the env,
 * the bundle's and files' URLs, and maxExecs (200) pairs of presigned URLs: GET for the command object
 * `sandbox-inputs/<runId>/exec-<n>.json`, PUT for its result `sandbox-results/<runId>/exec-<n>.json`.
 * The runner (functions/containers/sandbox-runner.ts, bundled; the task's entry point,
 * RUNNER_BOOTSTRAP, downloads it with the manifest) unpacks the working directory, then
 * polls for command n, runs it as an unprivileged user and PUTs its result, until a stop command
 * or the deadline. An exec writes the next command object and polls for its result; readFile,
 * writeFile and listFiles are execs of small shell commands; close writes the stop command.
 */

/** The container of the task definition that runs RUNNER_BOOTSTRAP. */
export const SANDBOX_CONTAINER_NAME = 'runner';
/** Where a run's inputs (manifest, bundle, files) are staged; the calls function may write here. */
export const SANDBOX_INPUTS_PREFIX = 'sandbox-inputs/';
/** Where the runner puts a run's result, through the presigned PUT URL only that run received. */
export const SANDBOX_RESULTS_PREFIX = 'sandbox-results/';

import {
  type ExecCommand,
  RUNNER_DEADLINE_MARGIN_MS,
  type RunManifest,
  type RunResult,
  SANDBOX_MANIFEST_ENV,
} from '../../containers/sandbox-protocol.ts';
import { SANDBOX_WORK_DIR, SandboxPathError, STDERR_TAIL_BYTES } from '../../shared/sandbox-conventions.ts';
import { shellQuote } from '../../shared/shell-quote.ts';

export {
  type ExecCommand,
  RUNNER_BOOTSTRAP,
  RUNNER_DEADLINE_MARGIN_MS,
  type RunManifest,
  type RunResult,
  SANDBOX_MANIFEST_ENV,
  SANDBOX_RUN_UID,
} from '../../containers/sandbox-protocol.ts';

export type Presign = (method: 'GET' | 'PUT', key: string, ttlSeconds: number) => Promise<string>;

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
}

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
}

/** The adapter from config; a missing setting is a SandboxUnavailableError naming its variable. */
export function createEcsSandbox(config: EcsSandboxConfig): EcsSandbox {
  const list = (value: string[] | string | undefined) =>
    (typeof value === 'string' ? value.split(',') : (value ?? [])).map((s) => s.trim()).filter(Boolean);
  const missing = [
    ['AWS_REGION', config.awsRegion],
    ['PLATFORM_BUNDLE_BUCKET', config.bundleBucket],
    ['PLATFORM_SANDBOX_CLUSTER', config.sandboxCluster],
    ['PLATFORM_SANDBOX_TASK_DEFINITION', config.sandboxTaskDefinition],
    ['PLATFORM_SANDBOX_SUBNETS', list(config.sandboxSubnets).join(',')],
    ['PLATFORM_SANDBOX_SECURITY_GROUPS', list(config.sandboxSecurityGroups).join(',')],
    ['PLATFORM_SANDBOX_RUNNER_FILE', config.sandboxRunnerFile],
  ]
    .filter(([, value]) => !value)
    .map(([name]) => name);
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
const MAX_URL_TTL_SECONDS = 7 * 24 * 60 * 60;
/** A result object larger than this is not a runner's: refused rather than read into memory. */
const RESULT_OVERHEAD_BYTES = 1024 * 1024;

/** listFiles returns at most this many paths (as the local adapter). */
const MAX_LISTED_FILES = 10_000;
/** DeleteObjects takes at most this many keys a request. */
const DELETE_BATCH = 1000;

export class EcsSandbox implements Sandbox {
  readonly kind = 'ecs' as const;
  readonly egress = false;
  /** Tasks run in the VPC, not on this host: there is no host loopback to keep them from, nor to publish on. */
  readonly ownNetwork = false;
  private readonly options: Required<Omit<EcsSandboxOptions, 'ecs' | 's3' | 'presign'>>;
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
    };
    this.ecs = options.ecs ?? new ECSClient({ region: options.region });
    let s3 = options.s3;
    this.s3 = async () => {
      s3 ??= new (await s3Sdk()).S3Client({ region: options.region });
      return s3;
    };
    this.presign = options.presign ?? createS3Presigner({ bucket: options.bucket, region: options.region });
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
    return new EcsSession(
      { ...this.options, ecs: this.ecs, s3: this.s3, presign: this.presign },
      spec,
      files,
    );
  }
}

interface SessionContext extends Required<Omit<EcsSandboxOptions, 'ecs' | 's3' | 'presign'>> {
  ecs: ECSClient;
  s3: () => Promise<S3Client>;
  presign: Presign;
}

class EcsSession implements SandboxSession {
  readonly workDir = SANDBOX_WORK_DIR;
  private closed = false;
  private taskArn: string | undefined;
  /** Set when RunTask failed: every later call fails the same way. */
  private startError: Error | undefined;
  private taskStopped = false;
  /** The number of the last command object written (exec-<n>.json). */
  private sent = 0;
  /** Commands run one at a time: the runner takes them in order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Objects this session wrote or read, deleted (that version) at close. */
  private readonly objects: { Key: string; VersionId?: string }[] = [];

  private readonly ctx: SessionContext;
  private readonly spec: SessionSpec;
  private readonly files: Map<string, Buffer>;

  constructor(ctx: SessionContext, spec: SessionSpec, files: Map<string, Buffer>) {
    this.ctx = ctx;
    this.spec = spec;
    this.files = files;
  }

  private resultKey(n: number): string {
    return `${SANDBOX_RESULTS_PREFIX}${this.spec.runId}/exec-${n}.json`;
  }

  private inputKey(name: string): string {
    return `${SANDBOX_INPUTS_PREFIX}${this.spec.runId}/${name}`;
  }

  async exec(
    command: string,
    options: { stdin?: string; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ExecResult> {
    if (this.closed) throw new Error('ECS sandbox: the session is closed');
    return this.serial(async () => {
      const started = Date.now();
      const deadlineMs =
        options.timeoutMs === undefined
          ? this.spec.deadlineMs
          : Math.min(this.spec.deadlineMs, started + Math.max(0, options.timeoutMs));
      if (options.signal?.aborted || deadlineMs <= started) return timedOutResult(0, '');
      return this.run(command, options.stdin ?? '', deadlineMs, started, options.signal);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Writes the next command object and waits for its result (starting the task first if need be). */
  private async run(
    command: string,
    stdin: string,
    deadlineMs: number,
    started: number,
    signal?: AbortSignal,
  ): Promise<ExecResult> {
    await this.ensureTask();
    if (this.taskStopped) {
      throw new SandboxUnavailableError(
        `the sandbox task of run ${this.spec.runId} is no longer running (stopped at a timeout, an abort or by ECS)`,
      );
    }
    if (this.sent >= this.ctx.maxExecs) {
      throw new SandboxUnavailableError(
        `run ${this.spec.runId} has used all ${this.ctx.maxExecs} commands an ECS sandbox session can run`,
      );
    }
    const n = ++this.sent;
    // The runner kills the command a little before the deadline, to upload its result in time.
    const killAtMs = deadlineMs - Math.min(RUNNER_DEADLINE_MARGIN_MS, Math.floor((deadlineMs - started) / 4));
    const body: ExecCommand = { v: 2, command, stdin, killAtMs };
    await this.put(this.inputKey(`exec-${n}.json`), Buffer.from(JSON.stringify(body)), 'application/json');
    const outcome = await this.waitForResult(n, deadlineMs, signal);
    const elapsed = Date.now() - started;
    const result = outcome.result;
    if (result && 'error' in result) {
      throw new SandboxUnavailableError(
        `ECS sandbox runner failed for run ${this.spec.runId}: ${result.error}`,
      );
    }
    if (result) return toExecResult(result, this.spec.limits);
    if (!outcome.task) {
      return timedOutResult(
        elapsed,
        signal?.aborted
          ? 'the sandbox task was stopped (aborted)'
          : 'the sandbox task was stopped at the deadline',
      );
    }
    return this.noResult(outcome.task, elapsed);
  }

  /** The first call that needs the task starts it: uploads the inputs and the manifest, then RunTask. */
  private async ensureTask(): Promise<void> {
    if (this.startError) throw this.startError;
    if (this.taskArn) return;
    try {
      await this.startTask();
    } catch (err) {
      this.startError = err as Error;
      throw err;
    }
  }

  private async startTask(): Promise<void> {
    const deadlineMs = this.spec.deadlineMs;
    const ttl = Math.min(MAX_URL_TTL_SECONDS, Math.max(60, Math.ceil((deadlineMs - Date.now()) / 1000) + 60));
    const bundle = this.spec.bundle;
    const bundleKey = bundle ? this.inputKey(`bundle.${bundle.format}`) : undefined;
    const placed = [...this.files].map(([path, data], i) => ({
      path,
      data,
      key: this.inputKey(`files/${i}`),
    }));
    this.files.clear();
    const runnerKey = this.inputKey('runner.cjs');
    await Promise.all([
      this.put(runnerKey, Buffer.from(this.ctx.runnerSource), 'application/javascript'),
      ...(bundle && bundleKey ? [this.put(bundleKey, bundle.data, 'application/octet-stream')] : []),
      ...placed.map((f) => this.put(f.key, f.data, 'application/octet-stream')),
    ]);
    const slots = Array.from({ length: this.ctx.maxExecs }, (_, i) => i + 1);
    const manifest: RunManifest = {
      v: 2,
      runId: this.spec.runId,
      workDir: SANDBOX_WORK_DIR,
      env: { ...this.spec.env },
      bundle:
        bundle && bundleKey
          ? { url: await this.ctx.presign('GET', bundleKey, ttl), format: bundle.format }
          : null,
      files: await Promise.all(
        placed.map(async (f) => ({ path: f.path, url: await this.ctx.presign('GET', f.key, ttl) })),
      ),
      execs: await Promise.all(
        slots.map(async (n) => ({
          commandUrl: await this.ctx.presign('GET', this.inputKey(`exec-${n}.json`), ttl),
          resultUrl: await this.ctx.presign('PUT', this.resultKey(n), ttl),
        })),
      ),
      pollMs: [this.ctx.pollMs, this.ctx.maxPollMs],
      deadlineMs,
      runner: { url: await this.ctx.presign('GET', runnerKey, ttl) },
      limits: {
        cpuSeconds: this.spec.limits.cpuSeconds,
        processes: this.spec.limits.processes,
        outputBytes: this.spec.limits.outputBytes,
        diskBytes: this.spec.limits.diskBytes,
      },
    };
    const manifestKey = this.inputKey('run.json');
    await this.put(manifestKey, Buffer.from(JSON.stringify(manifest)), 'application/json');
    const manifestUrl = await this.ctx.presign('GET', manifestKey, ttl);

    const input: RunTaskCommandInput = {
      cluster: this.ctx.cluster,
      taskDefinition: this.ctx.taskDefinition,
      launchType: 'FARGATE',
      count: 1,
      clientToken: this.spec.runId,
      startedBy: this.spec.runId,
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: [...this.ctx.subnets],
          securityGroups: [...this.ctx.securityGroups],
          assignPublicIp: 'DISABLED',
        },
      },
      overrides: {
        containerOverrides: [
          { name: SANDBOX_CONTAINER_NAME, environment: [{ name: SANDBOX_MANIFEST_ENV, value: manifestUrl }] },
        ],
      },
      tags: [
        { key: 'agenthost:run-id', value: this.spec.runId },
        { key: 'agenthost:workspace-id', value: this.spec.workspaceId },
      ],
    };
    const out = await this.ctx.ecs.send(new RunTaskCommand(input));
    const taskArn = out.tasks?.[0]?.taskArn;
    if (!taskArn || (out.failures?.length ?? 0) > 0) {
      if (taskArn) this.taskArn = taskArn;
      const why =
        (out.failures ?? [])
          .map((f) => [f.reason, f.detail].filter(Boolean).join(': '))
          .filter(Boolean)
          .join('; ') || 'no task and no failure reported';
      throw new SandboxUnavailableError(
        `ECS could not start the sandbox task for run ${this.spec.runId}: ${why}`,
      );
    }
    this.taskArn = taskArn;
  }

  /**
   * Polls the result object of command n (pollMs, growing by half up to maxPollMs), and every
   * describeMs asks ECS whether the task still runs. At the deadline (or on abort) StopTask: then
   * neither result nor task is returned. `task` is the stopped task when it ended by itself.
   */
  private async waitForResult(
    n: number,
    deadlineMs: number,
    signal?: AbortSignal,
  ): Promise<{ result?: RunResult; task?: Task }> {
    let delay = this.ctx.pollMs;
    let described = Date.now();
    for (;;) {
      const result = await this.readResult(n);
      if (result) return { result };
      const now = Date.now();
      if (now >= deadlineMs || signal?.aborted) {
        await this.stopTask(signal?.aborted ? 'agenthost: run aborted' : 'agenthost: run deadline reached');
        return {};
      }
      if (now - described >= this.ctx.describeMs && this.taskArn) {
        described = now;
        const out = await this.ctx.ecs.send(
          new DescribeTasksCommand({ cluster: this.ctx.cluster, tasks: [this.taskArn] }),
        );
        const task = out.tasks?.find((t) => t.taskArn === this.taskArn) ?? out.tasks?.[0];
        if (task?.lastStatus === 'STOPPED') {
          this.taskStopped = true;
          const last = await this.readResult(n);
          return last ? { result: last } : { task };
        }
      }
      await sleep(Math.min(delay, deadlineMs - now), signal);
      delay = Math.min(Math.ceil(delay * 1.5), this.ctx.maxPollMs);
    }
  }

  private async stopTask(reason: string): Promise<void> {
    if (!this.taskArn || this.taskStopped) return;
    this.taskStopped = true;
    await this.ctx.ecs.send(new StopTaskCommand({ cluster: this.ctx.cluster, task: this.taskArn, reason }));
  }

  /**
   * Command n's result object, or undefined while there is none. Without s3:ListBucket (the calls
   * role has none) S3 answers a missing key with 403 AccessDenied rather than NoSuchKey: both mean
   * "not yet".
   */
  private async readResult(n: number): Promise<RunResult | undefined> {
    const { GetObjectCommand } = await s3Sdk();
    const s3 = await this.ctx.s3();
    const key = this.resultKey(n);
    let out: GetObjectCommandOutput;
    try {
      out = await s3.send(new GetObjectCommand({ Bucket: this.ctx.bucket, Key: key }));
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NoSuchKey' || e.name === 'AccessDenied' || e.$metadata?.httpStatusCode === 404) {
        return undefined;
      }
      throw err;
    }
    this.objects.push({ Key: key, ...(out.VersionId ? { VersionId: out.VersionId } : {}) });
    const limit = this.spec.limits.outputBytes * 6 + RESULT_OVERHEAD_BYTES;
    if (out.ContentLength !== undefined && out.ContentLength > limit) {
      throw new SandboxUnavailableError(`ECS sandbox: the result of run ${this.spec.runId} is too large`);
    }
    const text = (await out.Body?.transformToString()) ?? '';
    return parseResult(text, this.spec.runId);
  }

  /**
   * The task stopped without a result. The command runs as another user than the runner and cannot
   * stop it, so this is the task failing to start (image pull, capacity, networking), or the
   * container killed as a whole (out of memory): the latter is the run's failure, the rest is ours.
   */
  private noResult(task: Task, elapsed: number): ExecResult {
    const container = task.containers?.find((c) => c.name === SANDBOX_CONTAINER_NAME) ?? task.containers?.[0];
    const reason = [task.stopCode, task.stoppedReason, container?.reason].filter(Boolean).join(': ');
    if (container?.exitCode === 137 || /OutOfMemory/i.test(container?.reason ?? '')) {
      return {
        exitCode: null,
        signal: 'SIGKILL',
        stdout: '',
        stderrTail: `the sandbox task was killed (${reason || 'exit status 137'})`,
        timedOut: false,
        stdoutTruncated: false,
        durationMs: elapsed,
      };
    }
    throw new SandboxUnavailableError(
      `the sandbox task of run ${this.spec.runId} stopped without a result (${reason || 'no reason given'}${
        container?.exitCode !== undefined ? `; exit status ${container.exitCode}` : ''
      })`,
    );
  }

  private async put(key: string, body: Buffer, contentType: string): Promise<void> {
    const { PutObjectCommand } = await s3Sdk();
    const s3 = await this.ctx.s3();
    const out = await s3.send(
      new PutObjectCommand({ Bucket: this.ctx.bucket, Key: key, Body: body, ContentType: contentType }),
    );
    this.objects.push({ Key: key, ...(out.VersionId ? { VersionId: out.VersionId } : {}) });
  }

  /**
   * A small shell command in the task (as uid 1000, like any exec) for the file operations; its
   * failures are SandboxPathErrors (the managed loop shows them to the model).
   */
  private async fileOp(what: string, path: string, command: string, stdin = ''): Promise<ExecResult> {
    if (this.closed) throw new Error('ECS sandbox: the session is closed');
    const r = await this.serial(() => {
      const started = Date.now();
      if (this.spec.deadlineMs <= started) return Promise.resolve(timedOutResult(0, ''));
      return this.run(command, stdin, this.spec.deadlineMs, started);
    });
    if (r.timedOut) {
      throw new SandboxUnavailableError(
        `ECS sandbox: ${what} ${JSON.stringify(path)} reached the run's deadline`,
      );
    }
    if (r.exitCode !== 0) {
      const why = r.stderrTail.trim().split('\n').at(-1) || `exit status ${r.exitCode ?? r.signal}`;
      throw new SandboxPathError(`${what} ${JSON.stringify(path)}: ${why}`);
    }
    return r;
  }

  /** A regular file (not a symbolic link) of the working directory, read in the task as base64. */
  async readFile(path: string): Promise<Buffer> {
    const rel = checkedPath(path);
    const r = await this.fileOp(
      'readFile',
      path,
      `f=${shellQuote(rel)}; if [ -L "$f" ] || [ ! -f "$f" ]; then echo "not a regular file" >&2; exit 2; fi; base64 -w 0 < "$f"`,
    );
    if (r.stdoutTruncated) {
      throw new SandboxPathError(
        `readFile ${JSON.stringify(path)}: the file is too large to read from the ECS sandbox`,
      );
    }
    return Buffer.from(r.stdout.trim(), 'base64');
  }

  /**
   * Before the task started, stages the file (uploaded with the run); afterwards writes it in the
   * task (directories created, an existing file replaced, a symbolic link refused).
   */
  async writeFile(path: string, data: Buffer | string): Promise<void> {
    const rel = checkedPath(path);
    if (this.closed) throw new Error('ECS sandbox: the session is closed');
    if (!this.taskArn && !this.startError) {
      this.files.set(rel, Buffer.from(data));
      return;
    }
    await this.fileOp(
      'writeFile',
      path,
      `f=${shellQuote(rel)}; if [ -L "$f" ] || [ -d "$f" ]; then echo "not a regular file" >&2; exit 2; fi; mkdir -p -- "$(dirname -- "$f")" && base64 -d > "$f"`,
      Buffer.from(data).toString('base64'),
    );
  }

  /** Regular files under `path`, relative to the working directory, sorted; links are not followed. */
  async listFiles(path?: string): Promise<string[]> {
    const rel = path === undefined || path === '' ? '' : checkedPath(path);
    const dir = rel === '' ? '.' : rel;
    const r = await this.fileOp(
      'listFiles',
      path ?? '',
      `d=${shellQuote(dir)}; if [ -L "$d" ] || [ ! -d "$d" ]; then echo "not a directory" >&2; exit 2; fi; find "$d" -type f -print0`,
    );
    const found = r.stdout
      .split('\0')
      .filter(Boolean)
      .map((p) => (p.startsWith('./') ? p.slice(2) : p))
      .sort();
    return found.slice(0, MAX_LISTED_FILES);
  }

  /**
   * Writes the stop command (the runner exits), stops the task if it may still run, and deletes
   * the run's objects (the exact versions written and read).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.taskArn && !this.taskStopped && this.sent < this.ctx.maxExecs) {
      try {
        const stop: ExecCommand = { v: 2, stop: true };
        await this.put(
          this.inputKey(`exec-${++this.sent}.json`),
          Buffer.from(JSON.stringify(stop)),
          'application/json',
        );
      } catch {
        // StopTask below ends it anyway.
      }
    }
    try {
      await this.stopTask('agenthost: session closed');
    } catch {
      // Already stopped or gone; a task left running still ends at its own deadline (the runner).
    }
    while (this.objects.length > 0) {
      try {
        const { DeleteObjectsCommand } = await s3Sdk();
        const s3 = await this.ctx.s3();
        await s3.send(
          new DeleteObjectsCommand({
            Bucket: this.ctx.bucket,
            Delete: { Objects: this.objects.splice(0, DELETE_BATCH), Quiet: true },
          }),
        );
      } catch {
        // Left for the bucket's lifecycle rule (docs/sandbox-aws.md); never masks the run's outcome.
      }
    }
  }
}

function parseResult(text: string, runId: string): RunResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const r = value as Record<string, unknown> | undefined;
  if (r && r.v === 1 && typeof r.error === 'string') return { v: 1, error: r.error.slice(0, 2000) };
  const ok =
    r &&
    r.v === 1 &&
    (r.exitCode === null || Number.isInteger(r.exitCode)) &&
    (r.signal === null || typeof r.signal === 'string') &&
    typeof r.stdout === 'string' &&
    typeof r.stdoutTruncated === 'boolean' &&
    typeof r.stderrTail === 'string' &&
    typeof r.timedOut === 'boolean' &&
    typeof r.durationMs === 'number' &&
    r.durationMs >= 0;
  if (!ok) throw new SandboxUnavailableError(`ECS sandbox: the result of run ${runId} is malformed`);
  return r as unknown as RunResult;
}

function toExecResult(r: Extract<RunResult, { exitCode: unknown }>, limits: SandboxLimits): ExecResult {
  // The runner already caps both; capped again here so the port's limits hold whatever the object says.
  const stdoutBytes = Buffer.from(r.stdout, 'utf8');
  const over = stdoutBytes.length > limits.outputBytes;
  const stderrBytes = Buffer.from(r.stderrTail, 'utf8');
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    stdout: over ? stdoutBytes.subarray(0, limits.outputBytes).toString('utf8') : r.stdout,
    stderrTail:
      stderrBytes.length > STDERR_TAIL_BYTES
        ? stderrBytes.subarray(stderrBytes.length - STDERR_TAIL_BYTES).toString('utf8')
        : r.stderrTail,
    timedOut: r.timedOut,
    stdoutTruncated: r.stdoutTruncated || over,
    durationMs: Math.round(r.durationMs),
  };
}

function timedOutResult(durationMs: number, stderrTail: string): ExecResult {
  return {
    exitCode: null,
    signal: 'SIGKILL',
    stdout: '',
    stderrTail,
    timedOut: true,
    stdoutTruncated: false,
    durationMs,
  };
}

/** safeRelativePath for the file operations: a refusal is a SandboxPathError. */
function checkedPath(path: string): string {
  try {
    return safeRelativePath(path);
  } catch (err) {
    throw new SandboxPathError((err as Error).message);
  }
}

/** A path relative to the working directory, normalised; absolute or escaping paths are refused. */
function safeRelativePath(path: string): string {
  if (typeof path !== 'string' || path.includes('\0') || path.includes('\\') || path.startsWith('/')) {
    throw new Error(`ECS sandbox: refused path ${JSON.stringify(path)}`);
  }
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) {
    throw new Error(`ECS sandbox: refused path ${JSON.stringify(path)}`);
  }
  return parts.join('/');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Presigned GET and PUT URLs for the bucket's sandbox objects, signed with the caller's (the calls
 * function's role) credentials. Checksums only when required: by default the SDK puts the CRC32 of
 * an empty body into a presigned PutObject URL, and S3 would then refuse the runner's upload.
 */
export function createS3Presigner(options: {
  bucket: string;
  region: string;
  credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
}): Presign {
  let client: S3Client | undefined;
  return async (method, key, ttlSeconds) => {
    if (!key.startsWith(SANDBOX_INPUTS_PREFIX) && !key.startsWith(SANDBOX_RESULTS_PREFIX)) {
      throw new Error(`ECS sandbox: will not sign ${key}`);
    }
    const { GetObjectCommand, PutObjectCommand, S3Client } = await s3Sdk();
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    client ??= new S3Client({
      region: options.region,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    const command =
      method === 'GET'
        ? new GetObjectCommand({ Bucket: options.bucket, Key: key })
        : new PutObjectCommand({ Bucket: options.bucket, Key: key });
    return getSignedUrl(client, command, { expiresIn: ttlSeconds });
  };
}
