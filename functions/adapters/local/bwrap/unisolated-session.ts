/**
 * An unisolated session's exec (UnisolatedSandbox, sandboxes.ts): the command as a plain child
 * process of the platform in its own process group, under prlimit when the host has it.
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ExecOptions, ExecResult, SandboxSession, SessionSpec } from '../../../ports/sandbox.ts';
import { BaseSession } from './base-session.ts';
import { rlimitArgs } from './inner-command.ts';
import type { PreparedRun } from './run-dir.ts';
import { RemoteChild, type Spawner } from './spawner.ts';
import { notRun, type SandboxChild, superviseChild } from './supervise-child.ts';

/** One unisolated session: every exec is a child process in the run's working directory. */
export class UnisolatedSession extends BaseSession implements SandboxSession {
  readonly workDir: string;
  private readonly prlimit: string | undefined;
  private readonly spawner: Spawner | undefined;

  constructor(
    spec: SessionSpec,
    run: PreparedRun,
    prlimit: string | undefined,
    spawner: Spawner | undefined,
  ) {
    super(spec, run);
    this.workDir = run.work.path;
    this.prlimit = prlimit;
    this.spawner = spawner;
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.execGuarded(options, () => this.execOnce(command, options));
  }

  private async execOnce(command: string, options: ExecOptions): Promise<ExecResult> {
    const started = Date.now();
    const deadline = this.deadlineOf(options.timeoutMs, started);
    if (deadline <= started || options.signal?.aborted) return notRun(deadline <= started);
    const limits = this.prlimit ? [this.prlimit, ...rlimitArgs(this.spec.limits, false), '--'] : [];
    const argv = [...limits, '/bin/sh', '-c', command];
    const env = {
      PATH: `${dirname(realpathSync(process.execPath))}:/usr/local/bin:/usr/bin:/bin`,
      HOME: this.workDir,
      LANG: 'C.UTF-8',
      TMPDIR: join(this.run.runDir, 'tmp'),
      ...this.spec.env,
    };
    const child: SandboxChild = this.spawner
      ? this.spawner.spawn(argv[0]!, argv.slice(1), {
          cwd: this.workDir,
          env,
          stdio: ['in', 'out', 'out'],
          detached: true,
        })
      : spawn(argv[0]!, argv.slice(1), {
          cwd: this.workDir,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
    const killTree = () => {
      // The spawner knows the pid before this process does.
      if (child instanceof RemoteChild) return void child.kill('SIGKILL', { group: true });
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    return superviseChild(this, child, options, started, deadline, killTree, undefined);
  }
}
