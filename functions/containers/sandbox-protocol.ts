/**
 * What the platform and the ECS sandbox's task say to each other (docs/sandbox-aws.md): the run
 * manifest, the command objects and the results, all through presigned S3 URLs; the one variable
 * a task gets; and the task's entry point, RUNNER_BOOTSTRAP. Shared by the adapter
 * (functions/adapters/aws/ecs-sandbox.ts) and the runner (sandbox-runner.ts), which must not
 * import the adapter (its bundle would carry the AWS SDK).
 */

/** The one environment variable the platform sets on a task: the run manifest's presigned GET URL. */
export const SANDBOX_MANIFEST_ENV = 'AGENTHOST_SANDBOX_MANIFEST_URL';
/** The uid and gid the command runs as when the runner starts as root (the node image's `node` user). */
export const SANDBOX_RUN_UID = 1000;
/** The runner stops the command this long before the deadline, to upload the result in time. */
export const RUNNER_DEADLINE_MARGIN_MS = 1500;

/**
 * The runner's protocol, raised when a runner started by an earlier version would misread what the
 * platform writes now (4: a manifest's `first` command and a command's `last`, which an older runner
 * would ignore, waiting for an `exec-1.json` or a stop never written). A warm runner's record names
 * the protocol of the runner it runs, and runs claim only runners of this one
 * (functions/adapters/aws/warm-runner-pool.ts): a deploy never hands a run to a runner started
 * before it, which idles out or is stopped for room.
 */
export const RUNNER_PROTOCOL = 4;

/** What the runner reads from `sandbox-inputs/<runId>/run.json`. */
export interface RunManifest {
  v: 2;
  runId: string;
  workDir: string;
  /** Exactly the session's env: the declared secrets and the platform's variables. */
  env: Record<string, string>;
  /**
   * The agent's bundle; `sha256` when it is read where the bundle store keeps it (which a new
   * upload may replace), checked by the runner before it unpacks anything.
   */
  bundle: { url: string; format: 'tar.gz' | 'zip'; sha256?: string } | null;
  files: { path: string; url: string }[];
  /**
   * Command slot n (1-based, in order): the presigned GET URL of `sandbox-inputs/<runId>/exec-<n>.json`
   * (an ExecCommand, polled until it exists) and the presigned PUT URL of
   * `sandbox-results/<runId>/exec-<n>.json` (its RunResult). Command 1's GET URL is empty when
   * `first` carries it, and a run whose `first` is marked `last` has only that one slot.
   */
  execs: { commandUrl: string; resultUrl: string }[];
  /**
   * Command 1 itself, when the platform knew it as it wrote this manifest (or the claim carrying
   * it): the runner then reads no `exec-1.json`, and the platform writes none (one S3 PUT and the
   * runner's polls of it fewer a run: docs/sandbox-aws.md, "What a run costs in S3").
   */
  first?: ExecCommand;
  /** The runner's wait between polls of a command object: first, growing by half up to second. */
  pollMs: [number, number];
  /** Epoch ms; the runner kills a command RUNNER_DEADLINE_MARGIN_MS before it and then exits. */
  deadlineMs: number;
  /**
   * The presigned GET URL of `sandbox-inputs/<runId>/runner.cjs`: the runner itself
   * (functions/containers/sandbox-runner.ts, bundled), which the task's bootstrap loads and runs.
   */
  runner: { url: string };
  limits: { cpuSeconds: number; processes: number; outputBytes: number; diskBytes: number };
}

/**
 * What a warm runner reads first (docs/sandbox-aws.md, "Warm runners"): a task started ahead of
 * demand gets this manifest's URL instead of a run's. It waits for claim 1, 2, ... in turn, each
 * through its presigned GET URL; a claim is a run bound to one (workspace, agent version), and
 * every later claim must name the same pair. Between runs it resets (every process of the run's
 * user killed, the working directory and scratch directories emptied); it exits when no claim comes
 * within idleMs, when it has used every claim slot, or at expiresAtMs (when its URLs expire).
 */
export interface PoolManifest {
  v: 3;
  runnerId: string;
  /** The runner itself, as in a run manifest. */
  runner: { url: string };
  /** Claim slot k (1-based): the GET URL of `sandbox-inputs/pool/<runnerId>/claim-<k>.json`. */
  claims: { url: string }[];
  /** How long the runner waits for a claim after a run when the claim says nothing (idleMs). */
  idleMs: number;
  /**
   * Epoch ms: the runner waits for its first claim until then (the platform's records count its
   * task until then); without it, idleMs from the runner's start.
   */
  firstClaimByMs?: number;
  /** Epoch ms: the runner waits for no claim after this. */
  expiresAtMs: number;
  pollMs: [number, number];
  /**
   * The first and longest wait between reads of the next claim slot, while it waits for a claim:
   * longer than a run's pollMs, since an idle runner reads S3 all the time it waits. @default pollMs
   */
  claimPollMs?: [number, number];
  /** Directories the run's user may write besides the working directory, emptied between runs (/tmp). */
  scratchDirs: string[];
}

/** The binding of a warm runner: the only pair whose runs it serves once claimed. */
export interface RunnerBinding {
  workspaceId: string;
  agentVersion: string;
}

/** What the platform writes to a warm runner's claim slot: one run, and whose it is. */
export interface RunnerClaim {
  v: 3;
  binding: RunnerBinding;
  run: RunManifest;
  /**
   * How long the runner waits for its pair's next claim after this run (the pair's traffic decides:
   * functions/adapters/aws/runner-idle-wait.ts); the pool manifest's idleMs without it.
   */
  idleMs?: number;
}

/** What the platform writes to `sandbox-inputs/<runId>/exec-<n>.json`. */
export type ExecCommand =
  | {
      v: 2;
      command: string;
      stdin: string;
      /** Epoch ms at which the runner kills the command (an exec's timeoutMs, a little early). */
      killAtMs: number;
      /**
       * No command follows: the runner ends the run once this one's result is uploaded, as at a
       * stop, and the platform writes no stop command (one S3 PUT fewer a run).
       */
      last?: true;
    }
  | { v: 2; stop: true };

/** What the runner writes to `sandbox-results/<runId>/exec-<n>.json`. */
export type RunResult =
  | {
      v: 1;
      exitCode: number | null;
      signal: string | null;
      stdout: string;
      stdoutTruncated: boolean;
      stderrTail: string;
      timedOut: boolean;
      durationMs: number;
      /** CPU time of the command and its children (the runner measures it: sandbox-runner.ts). */
      cpuMs?: number;
    }
  | { v: 1; error: string };

/**
 * The task's entry point (`node -e RUNNER_BOOTSTRAP`, in the task definition). A task definition's
 * containers must fit in 64 KiB, and the runner with its archive readers (tar, yauzl) is about
 * 130 KB, so the runner travels with each run instead: this reads the manifest's URL and removes
 * it from its own environment, downloads the manifest, then the runner through the manifest's
 * presigned URL, and runs it (a CommonJS module exporting `run(manifest)`). A failure before the
 * runner runs is reported as the first command's result, as the runner reports its own.
 */
export const RUNNER_BOOTSTRAP = [
  "'use strict';",
  `const url = process.env.${SANDBOX_MANIFEST_ENV};`,
  `delete process.env.${SANDBOX_MANIFEST_ENV};`,
  "const text = async (u) => { const r = await fetch(u); if (!r.ok) throw new Error('download failed with HTTP ' + r.status); return Buffer.from(await r.arrayBuffer()).toString('utf8'); };",
  "const report = (m, error) => m && m.execs && m.execs.length ? fetch(m.execs[0].resultUrl, { method: 'PUT', body: JSON.stringify({ v: 1, error }), headers: { 'content-type': 'application/json' } }).catch(() => {}) : undefined;",
  'let m;',
  '(async () => {',
  `  if (!url) throw new Error('${SANDBOX_MANIFEST_ENV} is not set');`,
  '  m = JSON.parse(await text(url));',
  '  const mod = { exports: {} };',
  "  new Function('module', 'exports', 'require', await text(m.runner.url))(mod, mod.exports, require);",
  '  await mod.exports.run(m);',
  '})().catch(async (err) => {',
  '  const error = String((err && err.message) || err).slice(0, 1000);',
  "  console.log(JSON.stringify({ time: new Date().toISOString(), msg: 'runner failed', error }));",
  "  await report(m, 'the runner could not start: ' + error);",
  '  process.exit(70);',
  '});',
].join('\n');
