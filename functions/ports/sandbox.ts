/**
 * The Sandbox port: where user code runs, never in the platform's own process. A session is one
 * run's isolated working directory (the agent's bundle unpacked, the call's files placed) in which
 * commands execute: a tool agent execs its command once; the managed loop execs its tools turn by
 * turn. Adapters: bubblewrap locally (functions/adapters/local/bwrap/sandboxes.ts), ECS Fargate in
 * AWS (functions/adapters/aws/ecs-sandbox.ts).
 */

export { SANDBOX_WORK_DIR, SandboxPathError, STDERR_TAIL_BYTES } from '../shared/sandbox-conventions.ts';

export interface SandboxLimits {
  /** CPU seconds for each exec (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address-space / memory limit in bytes for each exec. */
  memoryBytes: number;
  /** Processes (threads included) the run may have at once. */
  processes: number;
  /** Bytes of stdout kept; more is cut and reported as truncated. */
  outputBytes: number;
  /** Bytes the run may write to its working directory. */
  diskBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  cpuSeconds: 300,
  memoryBytes: 1024 * 1024 * 1024,
  processes: 64,
  outputBytes: 4 * 1024 * 1024,
  diskBytes: 512 * 1024 * 1024,
};

export interface SessionSpec {
  /** Unique per run; names the working directory and every log line. */
  runId: string;
  workspaceId: string;
  /**
   * Whom a sandbox kept between runs (the ECS warm runners) may serve: runs of this workspace (the
   * one whose secrets and data the run holds: the caller's) and this agent version (its record
   * id) only. Without it, an adapter never reuses a sandbox for the run.
   */
  reuseScope?: { workspaceId: string; agentVersion: string } | undefined;
  /** The agent's code bundle, unpacked into the working directory before anything runs. */
  bundle?:
    | {
        data: Buffer;
        format: 'tar.gz' | 'zip';
        /**
         * Its key in the bundle store, when it is an agent version's, and its SHA-256 (hex): the
         * ECS sandbox hands the task a URL to that object instead of uploading a copy for every
         * run, and the task checks the digest (a new upload may replace the object meanwhile).
         */
        key?: string;
        sha256?: string;
      }
    | undefined;
  /** Files placed under the working directory (paths relative to it, e.g. `input/report.pdf`). */
  files?: { path: string; data: Buffer }[];
  /** Environment of every exec: the declared secrets and the platform's variables, nothing else. */
  env: Record<string, string>;
  /** `none`: no network at all (the default); `egress`: outbound network as documented per adapter. */
  network: 'none' | 'egress';
  /**
   * With `egress`, on adapters whose sandbox has a network of its own (`ownNetwork`): the host's
   * loopback TCP ports the sandbox may reach, each at the same port on its own 127.0.0.1. Nothing
   * else on the host's loopback is reachable. Ignored where the sandbox cannot reach the host.
   */
  hostLoopbackPorts?: number[];
  limits: SandboxLimits;
  /**
   * What the agent declares it needs (its manifest's `sandbox`: vCPUs, MiB). The ECS sandbox runs
   * it on the smallest Fargate size that fits; the local sandbox ignores it (its exec memory limit
   * is `limits.memoryBytes`).
   */
  resources?: { cpu?: number | undefined; memoryMb?: number | undefined } | undefined;
  /** Epoch ms: every exec is killed (its whole process tree) at this time at the latest. */
  deadlineMs: number;
}

export interface ExecResult {
  exitCode: number | null;
  /** The signal that ended it (e.g. SIGKILL at the deadline or on a limit). */
  signal: string | null;
  stdout: string;
  /** The last 8 KB of stderr. */
  stderrTail: string;
  timedOut: boolean;
  stdoutTruncated: boolean;
  durationMs: number;
  /** CPU time the command used (user and system, its children included), where the sandbox measures it. */
  cpuMs?: number | undefined;
}

export interface ExecOptions {
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Each chunk of output as it arrives (always-on services stream their logs). Local adapters
   * only; stdout is still kept up to `outputBytes` for the result.
   */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /**
   * A host process id of the command's sandbox once it runs: the root of its process tree, inside
   * its namespaces (local adapters: for port checks).
   */
  onSpawn?: (pid: number) => void;
  /**
   * With `egress` on an adapter with `ownNetwork`: publishes `port` inside the sandbox at
   * 127.0.0.1:`hostPort` on the host, for the length of this exec (an always-on service's app,
   * behind its gateway). Nothing else inside is reachable from the host.
   */
  publish?: { hostPort: number; port: number };
  /**
   * The session's last command: nothing but close follows it, and every adapter refuses a command
   * or file operation after it. The ECS sandbox's runner then ends the run with the command (no
   * stop object to write: one S3 request fewer a run).
   */
  last?: boolean;
}

export interface SandboxSession {
  /** The absolute path of the working directory as the command sees it (e.g. /work). */
  readonly workDir: string;
  /** Runs `command` with /bin/sh -c in the working directory. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Paths relative to the working directory; escaping it is refused. */
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string): Promise<void>;
  listFiles(path?: string): Promise<string[]>;
  /** Kills anything left and removes the working directory. Always called, also after errors. */
  close(): Promise<void>;
}

export interface Sandbox {
  /** `bubblewrap`, `ecs`, or `unisolated` (the operator's explicit opt-out; never the default). */
  readonly kind: 'bubblewrap' | 'ecs' | 'unisolated';
  /**
   * Whether an `egress` session has a network of its own: its ports never collide with the host's,
   * the host's loopback is out of reach but for `hostLoopbackPorts`, and an app inside is reached
   * only through `publish`. False: the sandbox shares the host's network (unisolated) or has none
   * that the host can reach.
   */
  readonly ownNetwork: boolean;
  /**
   * Whether sessions may have outbound network (`network: 'egress'`). False on ECS, whose tasks
   * have no way out: an orchestrator there calls its dependencies through the platform only.
   */
  readonly egress: boolean;
  openSession(spec: SessionSpec): Promise<SandboxSession>;
  /**
   * Starts sandboxes ahead of demand, where the adapter keeps some ready (the ECS warm runners: up
   * to the pool's floor); resolves to how many it started. The pool function calls it every minute (jobs/sandbox-pool.ts).
   */
  prepare?(): Promise<number>;
  /**
   * Deletes what sessions that never closed left where the adapter keeps runs' objects (the ECS
   * sandbox's run manifests, claims and results, secret values among them): every such object no
   * session can still need at `now`. Resolves to how many it deleted. Housekeeping calls it
   * (jobs/housekeeping.ts).
   */
  sweep?(now: Date): Promise<number>;
  /**
   * The platform stops: ends every process its sessions still run (a command of a run cut off
   * by the stop, an always-on service's), where the adapter's processes would otherwise outlive
   * it (bubblewrap's spawner). A later session starts afresh.
   */
  close?(): Promise<void>;
}

/** The sandbox cannot run (bwrap missing and no opt-out, ECS misconfigured): 500, logged loudly. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

/**
 * No sandbox can start now, for a reason that passes with time: the deployment's ceiling of
 * sandboxes is reached (`ceiling`), or the cloud account's quota (`quota`) or capacity
 * (`capacity`), or none is free and the run has less time left than a new one takes to start
 * (`start`). The run waited for one within its deadline; the call answers 503 with Retry-After
 * (docs/sandbox-aws.md, "When no runner can start"), never 500.
 */
export type SandboxCapacityReason = 'ceiling' | 'quota' | 'capacity' | 'start';

export class SandboxCapacityError extends Error {
  override name = 'SandboxCapacityError';
  readonly reason: SandboxCapacityReason;
  /** Seconds after which a new call is likely to find a sandbox. */
  readonly retryAfterSeconds: number;
  constructor(reason: SandboxCapacityReason, message: string, retryAfterSeconds: number) {
    super(message);
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The host port an exec was to be published on (`ExecOptions.publish`) was taken when the sandbox
 * bound it: a port found free a moment before can be taken in between, by any process's listener
 * or by a client's connection (whose local port comes from the same range). Nothing ran; the
 * caller may choose another port and exec again (listening-ports.ts, `execPublished`).
 */
export class PublishPortTakenError extends SandboxUnavailableError {
  override name = 'PublishPortTakenError';
}
