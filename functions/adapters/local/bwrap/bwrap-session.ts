/**
 * A bubblewrap session's exec: bwrap started with its options on fd 3, the sandbox's pid read from
 * its info fd, then (as root) the id maps and (egress) pasta's network set up while the sandbox
 * waits on its block fds, and the child supervised until it ends.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import {
  type ExecOptions,
  type ExecResult,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../../ports/sandbox.ts';
import { SANDBOX_WORK_DIR } from '../../../shared/sandbox-conventions.ts';
import { type AttachedNetwork, attachNetwork } from '../pasta-network.ts';
import { BaseSession } from './base-session.ts';
import { bwrapArgs } from './bwrap-args.ts';
import { innerCommand } from './inner-command.ts';
import type { PreparedRun } from './run-dir.ts';
import { writeIdMaps } from './sandbox-user.ts';
import { RemoteChild, type Spawner } from './spawner.ts';
import type { FdRole } from './spawner-protocol.ts';
import { notRun, type SandboxChild, SETUP_FAILED, superviseChild } from './supervise-child.ts';

export interface SessionTools {
  /** The synthetic passwd, group, hosts and nsswitch.conf, shared by every run (sandbox-user.ts). */
  identityDir: string;
  bwrapPath: string;
  version: string;
  nodePath: string;
  asRoot: boolean;
  hostUid: number;
  hostGid: number;
  tools: { prlimit: string; setpriv?: string; bash?: string };
  /** pasta, for egress sessions (pasta-network.ts). */
  pastaPath: string | undefined;
  /** False: an egress session reaches its hostLoopbackPorts and nothing else (BwrapSandboxOptions.outbound). */
  outbound: boolean;
  /** Who forks bwrap: the spawner process, or (undefined) this process itself. */
  spawner: Spawner | undefined;
}

/** One bubblewrap session: every exec is a new sandbox over the run's working directory. */
export class BwrapSession extends BaseSession implements SandboxSession {
  readonly workDir = SANDBOX_WORK_DIR;
  private readonly t: SessionTools;

  constructor(spec: SessionSpec, run: PreparedRun, tools: SessionTools) {
    super(spec, run);
    this.t = tools;
  }

  /**
   * Runs the command in a new sandbox; a sandbox that bubblewrap failed to set up is set up once
   * more. Nothing of the command has run then (bwrap failed before the sandbox's first process
   * said it started), and such failures can be passing: under load bwrap has failed to give the
   * sandbox's loopback its address ("loopback: Failed RTM_NEWADDR: No child processes") once, and
   * the next sandbox started.
   */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.execGuarded(options, async () => {
      try {
        return await this.execOnce(command, options);
      } catch (err) {
        if (!(err instanceof SandboxUnavailableError) || !err.message.startsWith(SETUP_FAILED)) throw err;
        return this.execOnce(command, options);
      }
    });
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: one command's process: its spawn, timers and output limits share the command's state
  private async execOnce(command: string, options: ExecOptions): Promise<ExecResult> {
    this.assertNotClosed();
    const started = Date.now();
    const deadline = this.deadlineOf(options.timeoutMs, started);
    if (deadline <= started || options.signal?.aborted) return notRun(deadline <= started);
    const t = this.t;
    const egress = this.spec.network === 'egress';
    if (options.publish && !egress) throw new Error('publish needs a session with network egress');
    const args = bwrapArgs({
      version: t.version,
      asRoot: t.asRoot,
      network: this.spec.network,
      limits: this.spec.limits,
      env: this.spec.env,
      work: this.run.work.path,
      identityDir: t.identityDir,
      nodePath: t.nodePath,
    });
    const inner = innerCommand({
      asRoot: t.asRoot,
      limits: this.spec.limits,
      tools: t.tools,
      command,
      knownDescriptors: t.spawner !== undefined,
    });
    // fd 3: bwrap's options (NUL-separated, so secrets in --setenv never show in `ps`); fd 4: its
    // info (the sandbox's pid); fd 5 (as root): the user-namespace block; fd 6: the "started"
    // marker; fd 7 (egress): the block held until pasta has configured the sandbox's network.
    const wantsInfo = t.asRoot || egress;
    const roles: FdRole[] = [
      'in',
      'out',
      'out',
      'in',
      wantsInfo ? 'out' : 'ignore',
      t.asRoot ? 'in' : 'ignore',
      'out',
      egress ? 'in' : 'ignore',
    ];
    const argv = ['--args', '3', '--', ...inner];
    const child: SandboxChild = t.spawner
      ? t.spawner.spawn(t.bwrapPath, argv, { stdio: roles, env: {} })
      : spawn(t.bwrapPath, argv, { stdio: roles.map((r) => (r === 'ignore' ? 'ignore' : 'pipe')), env: {} });
    const argsPipe = child.stdio[3] as Writable;
    argsPipe.on('error', () => {});
    argsPipe.end(Buffer.from(`${args.join('\0')}\0`));
    let setupFailure: Error | undefined;
    let network: AttachedNetwork | undefined;
    let ended = false;
    /** The sandbox's first process (pid 1 of its pid namespace), once bwrap has said which. */
    let sandboxPid: number | undefined;
    /** A kill was asked for: the sandbox must not be set up any further (see the info handler). */
    let killRequested = false;
    // bwrap and the sandbox's first process: the latter may still wait on a block fd (the id maps,
    // the network), and killing it takes its whole pid namespace with it.
    const killAll = () => {
      killRequested = true;
      // The spawner kills bwrap's own children first, and the sandbox's first process whenever it
      // learns of it (guarded below), also after the kill (spawner-process.ts).
      if (child instanceof RemoteChild) return void child.kill('SIGKILL');
      // Only while bwrap runs: once it has exited, that pid may belong to someone else.
      if (sandboxPid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(sandboxPid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      child.kill('SIGKILL');
    };
    // Node types a ChildProcess's stdio as its first five; bwrap's block and info fds lie past them.
    const pipes: readonly (Readable | Writable | null | undefined)[] = child.stdio;
    const pipe = (fd: number) => {
      const p = pipes[fd];
      p?.on('error', () => {});
      return p;
    };
    const userBlock = pipe(5) as Writable | null;
    const netBlock = pipe(7) as Writable | null;
    // Up to the command: the id maps (as root), then the network (egress), each released in turn.
    const prepare = async (pid: number) => {
      if (t.asRoot) {
        writeIdMaps(pid, t.hostUid, t.hostGid);
        userBlock?.end('x');
      }
      if (egress) {
        network = await attachNetwork({
          pastaPath: t.pastaPath!,
          asRoot: t.asRoot,
          pid,
          runDir: this.run.runDir,
          plan: {
            hostLoopbackPorts: this.spec.hostLoopbackPorts ?? [],
            publish: options.publish,
            outbound: t.outbound,
          },
        });
        // Killed while pasta was attaching: nothing will close it later.
        if (ended) return void (await network.close());
        netBlock?.end('x');
      }
      options.onSpawn?.(pid);
    };
    if (wantsInfo) {
      const info = pipe(4) as Readable;
      let text = '';
      let seen = false;
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
        if (!pid || seen) return;
        seen = true;
        sandboxPid = Number(pid);
        if (child instanceof RemoteChild) child.guard(sandboxPid);
        // Killed before bwrap's report arrived (a delete right after a deploy): bwrap may be gone
        // already, its sandbox's first process blocked for good; kill that too, set nothing up.
        if (killRequested) return void killAll();
        prepare(sandboxPid).catch((err: Error) => {
          setupFailure = err;
          // The sandbox's first process still waits on its block fds, holding the output pipes.
          killAll();
        });
      });
    }
    const supervised = { ...options, onSpawn: wantsInfo ? undefined : options.onSpawn };
    try {
      return await superviseChild(this, child, supervised, started, deadline, killAll, 6);
    } catch (err) {
      if (!setupFailure) throw err;
      if (setupFailure instanceof SandboxUnavailableError) throw setupFailure;
      throw new SandboxUnavailableError(
        `Could not map the sandbox's user namespace: ${setupFailure.message}`,
      );
    } finally {
      ended = true;
      await (network as AttachedNetwork | undefined)?.close();
    }
  }
}
