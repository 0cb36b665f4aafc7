/**
 * An ECS sandbox session (functions/adapters/aws/ecs-sandbox.ts): the commands of one run, sent
 * one at a time to its task as command objects in S3 and answered by result objects it polls for;
 * the file operations, which are small shell commands; and the close that stops the task and
 * deletes the run's objects.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Task } from '@aws-sdk/client-ecs';
import {
  type ExecCommand,
  RUNNER_DEADLINE_MARGIN_MS,
  type RunResult,
} from '../../containers/sandbox-protocol.ts';
import {
  type ExecResult,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';
import { SANDBOX_WORK_DIR } from '../../shared/sandbox-conventions.ts';
import {
  fileOpOutcome,
  listedFiles,
  listFilesCommand,
  readFileCommand,
  readFileContent,
  writeFileCommand,
} from './ecs-sandbox-file-commands.ts';
import type { SessionContext } from './ecs-sandbox-options.ts';
import { startOwnTask } from './ecs-sandbox-own-task.ts';
import { checkedPath } from './ecs-sandbox-paths.ts';
import { readRunResult, timedOutResult, toExecResult } from './ecs-sandbox-results.ts';
import {
  deleteRunObjects,
  putRunObject,
  sandboxInputKey,
  sandboxResultKey,
  stageRun,
} from './ecs-sandbox-staging.ts';
import { describeSandboxTask, exitedIdle, stoppedTaskResult, stopSandboxTask } from './ecs-sandbox-task.ts';
import { capacityError, leaseWarmRunner, timeToStartTask, type WarmLease } from './ecs-sandbox-warm.ts';
import { fargateSize } from './fargate-size.ts';

export class EcsSession implements SandboxSession {
  readonly workDir = SANDBOX_WORK_DIR;
  private closed = false;
  private taskArn: string | undefined;
  /** The warm runner this session claimed, when the run's task came from the pool. */
  private lease: WarmLease | undefined;
  /** Set when RunTask failed: every later call fails the same way. */
  private startError: Error | undefined;
  private taskStopped = false;
  /** The number of the last command sent (exec-<n>.json, or command 1 in the manifest). */
  private sent = 0;
  /** A command marked last (ExecOptions.last) was sent: nothing but close may follow. */
  private lastSent = false;
  /** The runner answered that last command: it has ended the run by itself, no stop to write. */
  private ended = false;
  /** When S3 took that last result: the warm runner's wait for its next claim began then. */
  private endedAtMs: number | undefined;
  /** The run was placed again after its first runner exited without reading its claim (once). */
  private replaced = false;
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

  async exec(
    command: string,
    options: { stdin?: string; timeoutMs?: number; signal?: AbortSignal; last?: boolean } = {},
  ): Promise<ExecResult> {
    this.assertOpen();
    return this.serial(async () => {
      const started = Date.now();
      const deadlineMs =
        options.timeoutMs === undefined
          ? this.spec.deadlineMs
          : Math.min(this.spec.deadlineMs, started + Math.max(0, options.timeoutMs));
      if (options.signal?.aborted || deadlineMs <= started) return timedOutResult(0, '');
      return this.run(command, options.stdin ?? '', deadlineMs, started, options.signal, options.last);
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('ECS sandbox: the session is closed');
    if (this.lastSent) throw new Error(`ECS sandbox: run ${this.spec.runId} has run its last command`);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Writes the next command object and waits for its result. The command that starts the task goes
   * in the task's manifest (or the warm runner's claim) instead: no object of its own.
   */
  private async run(
    command: string,
    stdin: string,
    deadlineMs: number,
    started: number,
    signal?: AbortSignal,
    last = false,
  ): Promise<ExecResult> {
    this.assertOpen();
    // The runner kills the command a little before the deadline, to upload its result in time.
    const killAtMs = deadlineMs - Math.min(RUNNER_DEADLINE_MARGIN_MS, Math.floor((deadlineMs - started) / 4));
    const body: ExecCommand = { v: 2, command, stdin, killAtMs, ...(last ? { last: true as const } : {}) };
    const inline = this.taskArn === undefined && this.startError === undefined;
    await this.ensureTask(inline ? body : undefined);
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
    if (last) this.lastSent = true;
    if (!(inline && n === 1)) {
      await this.put(
        sandboxInputKey(this.spec.runId, `exec-${n}.json`),
        Buffer.from(JSON.stringify(body)),
        'application/json',
      );
    }
    const outcome = await this.waitForResult(n, deadlineMs, signal);
    if (last && outcome.result) {
      this.ended = true;
      this.endedAtMs = outcome.writtenAtMs;
    }
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
    if (this.lease && inline && n === 1 && !this.replaced && exitedIdle(outcome.task)) {
      return this.placeAgain(command, stdin, deadlineMs, started, signal, last);
    }
    return stoppedTaskResult(outcome.task, elapsed, this.spec.runId);
  }

  /**
   * The warm runner this run claimed exited idle before it read the claim: its wait ran out while
   * the claim was being written (a clock or a poll late by the claim margin). Nothing of the run
   * ran, so it is placed again, once, as if it had just begun: another runner, or a task of its
   * own, within the same deadline (or the 503 of a run that finds no sandbox in time).
   */
  private async placeAgain(
    command: string,
    stdin: string,
    deadlineMs: number,
    started: number,
    signal: AbortSignal | undefined,
    last: boolean,
  ): Promise<ExecResult> {
    this.replaced = true;
    const lease = this.lease;
    this.lease = undefined;
    this.taskArn = undefined;
    this.taskStopped = false;
    this.sent = 0;
    this.lastSent = false;
    await lease?.drop().catch(() => undefined);
    await lease?.refilled;
    return this.run(command, stdin, deadlineMs, started, signal, last);
  }

  /**
   * The first call that needs the task starts it: uploads the inputs and the manifest (carrying
   * `first`, the command that starts it), then RunTask.
   */
  private async ensureTask(first?: ExecCommand): Promise<void> {
    if (this.startError) throw this.startError;
    if (this.taskArn) return;
    try {
      await this.startTask(first);
    } catch (err) {
      this.startError = err as Error;
      throw err;
    }
  }

  private async startTask(first: ExecCommand | undefined): Promise<void> {
    const put = (key: string, body: Buffer, contentType: string) => this.put(key, body, contentType);
    const { warm } = this.ctx;
    const scope = this.spec.reuseScope;
    const claimed = warm !== undefined && scope !== undefined;
    const size = fargateSize(this.spec.resources);
    if (!size) {
      throw new SandboxUnavailableError(
        `no Fargate size has the ${this.spec.resources?.cpu} vCPU and ${this.spec.resources?.memoryMb} MiB run ${this.spec.runId} declares`,
      );
    }
    // A run's own task that could not start in time is refused before anything is staged.
    if (!claimed && !timeToStartTask(this.ctx, this.spec.deadlineMs)) {
      throw capacityError('start', undefined, this.ctx.taskStartMs);
    }
    // A warm runner gets the manifest in its claim and has its runner already.
    const { manifest, envFile } = await stageRun(this.ctx, this.spec, this.files, put, {
      forClaim: claimed,
      first,
    });
    if (warm && scope) {
      // The runner's own objects outlive the run: not deleted at close.
      const poolPut = (key: string, body: Buffer, contentType: string) =>
        this.put(key, body, contentType, false);
      this.lease = await leaseWarmRunner(
        this.ctx,
        warm,
        { binding: scope, manifest, size, deadlineMs: this.spec.deadlineMs },
        put,
        poolPut,
      );
      this.taskArn = this.lease.taskArn;
      return;
    }
    await startOwnTask(this.ctx, this.spec, envFile, size, (arn) => {
      this.taskArn = arn;
    });
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
  ): Promise<{ result?: RunResult; writtenAtMs?: number; task?: Task }> {
    let delay = this.ctx.pollMs;
    let described = Date.now();
    for (;;) {
      const read = await this.readResult(n);
      if (read) return read;
      const now = Date.now();
      if (now >= deadlineMs || signal?.aborted) {
        await this.stopTask(signal?.aborted ? 'agenthost: run aborted' : 'agenthost: run deadline reached');
        return {};
      }
      if (now - described >= this.ctx.describeMs && this.taskArn) {
        described = now;
        const task = await describeSandboxTask(this.ctx, this.taskArn);
        if (task?.lastStatus === 'STOPPED') {
          this.taskStopped = true;
          const last = await this.readResult(n);
          return last ?? { task };
        }
      }
      // An abort ends the wait early (the next turn stops the task), not the session with an error.
      await sleep(Math.min(delay, deadlineMs - now), undefined, { signal }).catch(() => undefined);
      delay = Math.min(Math.ceil(delay * 1.5), this.ctx.maxPollMs);
    }
  }

  private async stopTask(reason: string): Promise<void> {
    if (!this.taskArn || this.taskStopped) return;
    this.taskStopped = true;
    await stopSandboxTask(this.ctx, this.taskArn, reason);
  }

  /** Command n's result object and when S3 took it, or undefined while there is none. */
  private readResult(n: number): Promise<{ result: RunResult; writtenAtMs: number } | undefined> {
    return readRunResult(this.ctx, this.spec, sandboxResultKey(this.spec.runId, n), this.objects);
  }

  private async put(key: string, body: Buffer, contentType: string, deleteAtClose = true): Promise<void> {
    const out = await putRunObject(this.ctx, key, body, contentType);
    if (deleteAtClose)
      this.objects.push({ Key: key, ...(out.VersionId ? { VersionId: out.VersionId } : {}) });
  }

  /**
   * A small shell command in the task (as uid 1000, like any exec) for the file operations; its
   * failures are SandboxPathErrors (the managed loop shows them to the model).
   */
  private async fileOp(what: string, path: string, command: string, stdin = ''): Promise<ExecResult> {
    this.assertOpen();
    const r = await this.serial(() => {
      const started = Date.now();
      if (this.spec.deadlineMs <= started) return Promise.resolve(timedOutResult(0, ''));
      return this.run(command, stdin, this.spec.deadlineMs, started);
    });
    return fileOpOutcome(what, path, r);
  }

  /** A regular file (not a symbolic link) of the working directory, read in the task as base64. */
  async readFile(path: string): Promise<Buffer> {
    const rel = checkedPath(path);
    return readFileContent(path, await this.fileOp('readFile', path, readFileCommand(rel)));
  }

  /**
   * Before the task started, stages the file (uploaded with the run); afterwards writes it in the
   * task (directories created, an existing file replaced, a symbolic link refused).
   */
  async writeFile(path: string, data: Buffer | string): Promise<void> {
    const rel = checkedPath(path);
    this.assertOpen();
    if (!this.taskArn && !this.startError) {
      this.files.set(rel, Buffer.from(data));
      return;
    }
    await this.fileOp('writeFile', path, writeFileCommand(rel), Buffer.from(data).toString('base64'));
  }

  /** Regular files under `path`, relative to the working directory, sorted; links are not followed. */
  async listFiles(path?: string): Promise<string[]> {
    const rel = path === undefined || path === '' ? '' : checkedPath(path);
    const r = await this.fileOp('listFiles', path ?? '', listFilesCommand(rel === '' ? '.' : rel));
    return listedFiles(r.stdout);
  }

  /**
   * Writes the stop command (the runner exits) unless the runner ended the run at its last command,
   * stops the task if it may still run, and deletes the run's objects (the exact versions written
   * and read).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let stopSent = this.ended && !this.taskStopped;
    if (this.taskArn && !this.taskStopped && !this.ended && this.sent < this.ctx.maxExecs) {
      try {
        const stop: ExecCommand = { v: 2, stop: true };
        await this.put(
          sandboxInputKey(this.spec.runId, `exec-${++this.sent}.json`),
          Buffer.from(JSON.stringify(stop)),
          'application/json',
          // A warm runner must still read it after this session has gone: it is not deleted (it
          // holds nothing but the stop), or the runner would wait for the run's deadline.
          this.lease === undefined,
        );
        stopSent = true;
      } catch {
        // StopTask below ends it anyway.
      }
    }
    if (this.lease && stopSent) {
      // A warm runner ends the run at the stop command and waits for its pair's next run.
      await this.lease.release(this.ended ? this.endedAtMs : undefined).catch(() => undefined);
      await this.lease.refilled;
    } else {
      // Its task stopped, or it could not be told to stop: the pool forgets the runner.
      if (this.lease) {
        await this.lease.drop().catch(() => undefined);
        await this.lease.refilled;
      }
      try {
        await this.stopTask('agenthost: session closed');
      } catch {
        // Already stopped or gone; a task left running still ends at its own deadline (the runner).
      }
    }
    await deleteRunObjects(this.ctx, this.objects.splice(0));
  }
}
