/**
 * One exec's child process, watched until it ends, for both local sandboxes: its input, the
 * captured stdout (capped) and stderr tail, the deadline and abort kill, the disk limit measured
 * while it runs, and its ending turned into an ExecResult.
 */
import type { ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import {
  type ExecOptions,
  type ExecResult,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../../ports/sandbox.ts';
import { STDERR_TAIL_BYTES } from '../../../shared/sandbox-conventions.ts';
import type { HostWorkDir } from './host-work-dir.ts';
import type { RemoteChild } from './spawner.ts';

/** A child started in this process (ChildProcess) or by the spawner (RemoteChild, spawner.ts). */
export type SandboxChild = ChildProcess | RemoteChild;

/** How often the working directory's size is measured while a command runs (at least; a slow walk spaces them out). */
const DISK_CHECK_INTERVAL_MS = 100;
/** Files and directories a run may add to its working directory. */
export const MAX_NEW_ENTRIES = 100_000;

/** How a sandbox that bubblewrap could not set up is reported (bwrap-session.ts tries it once more). */
export const SETUP_FAILED = 'bubblewrap could not set up the sandbox';

/** After a kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 3_000;

export interface Running {
  kill(): void;
  done: Promise<unknown>;
}

export interface Supervisable {
  spec: SessionSpec;
  track(r: Running): () => void;
  diskCheck(): { work: HostWorkDir; maxBytes: number; maxEntries: number };
}

export function notRun(timedOut: boolean): ExecResult {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stderrTail: timedOut ? 'not started: the deadline had already passed' : 'not started: aborted',
    timedOut,
    stdoutTruncated: false,
    durationMs: 0,
  };
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the child's output, timers, disk check and exit share one set of state closures
export function superviseChild(
  session: Supervisable,
  child: SandboxChild,
  options: ExecOptions,
  started: number,
  deadline: number,
  killTree: () => void,
  markerFd: number | undefined,
): Promise<ExecResult> {
  const { outputBytes } = session.spec.limits;
  const stdoutChunks: Buffer[] = [];
  let stdoutBytes = 0;
  let stdoutTruncated = false;
  let stderrTail = Buffer.alloc(0);
  let timedOut = false;
  let killed = false;
  let note = '';
  let startedInside = markerFd === undefined;

  const kill = () => {
    if (killed) return;
    killed = true;
    killTree();
    // A process stuck in the kernel can keep a pipe open; do not wait for it forever.
    setTimeout(() => {
      for (const s of child.stdio as (Readable | Writable | null | undefined)[]) s?.destroy();
    }, KILL_GRACE_MS).unref();
  };

  // The spawner's children learn their pid a round trip later.
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  else if (options.onSpawn) child.once('spawn', () => options.onSpawn?.(child.pid!));
  child.stdout!.on('data', (chunk: Buffer) => {
    options.onOutput?.('stdout', chunk);
    const room = outputBytes - stdoutBytes;
    if (chunk.length <= room) {
      stdoutChunks.push(chunk);
      stdoutBytes += chunk.length;
    } else {
      if (room > 0) {
        stdoutChunks.push(chunk.subarray(0, room));
        stdoutBytes += room;
      }
      // Keep reading (so the command never blocks on a full pipe) and drop the rest.
      stdoutTruncated = true;
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    options.onOutput?.('stderr', chunk);
    stderrTail = Buffer.concat([stderrTail, chunk]);
    if (stderrTail.length > STDERR_TAIL_BYTES)
      stderrTail = stderrTail.subarray(stderrTail.length - STDERR_TAIL_BYTES);
  });
  if (markerFd !== undefined) {
    const marker = child.stdio[markerFd] as Readable;
    marker.on('data', () => {
      startedInside = true;
    });
    marker.on('error', () => {});
  }
  const stdin = child.stdin!;
  stdin.on('error', () => {}); // EPIPE when the command does not read its input
  stdin.end(options.stdin ?? '');

  const timer = setTimeout(
    () => {
      timedOut = true;
      kill();
    },
    Math.min(Math.max(0, deadline - Date.now()), 2 ** 31 - 1),
  );
  const onAbort = () => kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // The disk limit: RLIMIT_FSIZE caps each file; this caps the working directory as a whole.
  const disk = session.diskCheck();
  let diskTimer: NodeJS.Timeout | undefined;
  let finished = false;
  let nextCheck = DISK_CHECK_INTERVAL_MS;
  const checkDisk = async () => {
    if (finished || killed) return;
    try {
      const walkStarted = Date.now();
      const usage = await disk.work.usage(disk.maxEntries);
      nextCheck = Math.max(DISK_CHECK_INTERVAL_MS, 4 * (Date.now() - walkStarted));
      if (!finished && !killed && (usage.bytes > disk.maxBytes || usage.entries > disk.maxEntries)) {
        note =
          usage.entries > disk.maxEntries
            ? `[sandbox] killed: more than ${MAX_NEW_ENTRIES} new files in the working directory`
            : `[sandbox] killed: the working directory grew past the disk limit of ${session.spec.limits.diskBytes} bytes`;
        kill();
        return;
      }
    } catch {
      // The tree changed under the walk; measure again next time.
    }
    if (!finished && !killed) diskTimer = setTimeout(checkDisk, nextCheck);
  };
  diskTimer = setTimeout(checkDisk, DISK_CHECK_INTERVAL_MS);

  let settle!: () => void;
  const done = new Promise<void>((r) => {
    settle = r;
  });
  const untrack = session.track({ kill, done });

  return new Promise<ExecResult>((resolvePromise, rejectPromise) => {
    let spawnError: Error | undefined;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('exit', () => {
      // Unisolated: whatever the command left in its process group goes with it.
      if (markerFd === undefined) killTree();
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      finished = true;
      clearTimeout(timer);
      clearTimeout(diskTimer);
      options.signal?.removeEventListener('abort', onAbort);
      untrack();
      settle();
      const durationMs = Date.now() - started;
      let tail = stderrTail.toString('utf8');
      if (note)
        tail = `${tail}${tail && !tail.endsWith('\n') ? '\n' : ''}${note}\n`.slice(-STDERR_TAIL_BYTES);
      if (spawnError) {
        rejectPromise(new SandboxUnavailableError(`The sandbox could not be started: ${spawnError.message}`));
        return;
      }
      if (!startedInside && !killed) {
        rejectPromise(
          new SandboxUnavailableError(
            `${SETUP_FAILED} (exit ${code ?? signal}): ${tail.trim().slice(-2000)}`,
          ),
        );
        return;
      }
      let exitCode = code;
      let sig: string | null = signal;
      if (sig === null && code !== null && code > 128 && code <= 128 + 64) {
        // A signal inside the sandbox reaches us as 128+n (bwrap and the shell both report it so).
        const name = signalName(code - 128);
        if (name) {
          sig = name;
          exitCode = null;
        }
      } else if (sig !== null) {
        exitCode = null;
      }
      resolvePromise({
        exitCode,
        signal: sig,
        stdout: Buffer.concat(stdoutChunks).toString('utf8'),
        stderrTail: tail,
        timedOut,
        stdoutTruncated,
        durationMs,
      });
    });
  });
}

function signalName(n: number): string | undefined {
  for (const [name, value] of Object.entries(osConstants.signals)) if (value === n) return name;
  return undefined;
}
