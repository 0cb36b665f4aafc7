import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SANDBOX_RUN_UID } from './sandbox-protocol.ts';

/**
 * A warm runner's reset between two runs (warm-runner.ts): nothing an earlier run left may be seen
 * by the next, even of the same workspace and agent version. Every process of the run's user is
 * killed, then the working directory and the scratch directories (/tmp) are emptied. A reset that
 * cannot finish throws: the runner then exits rather than serve another run.
 *
 * As root (on Fargate: the runner starts as root and runs commands as SANDBOX_RUN_UID), the kill is
 * `kill -9 -1` run as that user: the kernel signals every process of the user but the killer in
 * one pass under its task list lock, so a process that forks meanwhile cannot slip past it. That
 * signal reaches every process of the user in the PID namespace, so it is sent only when the
 * namespace is the task's own (onlyTaskProcesses: a Fargate container). On a host (the runner started by hand or by a
 * test as root) the namespace also holds the kernel's threads and everyone else's processes, and
 * the user may be a person's (uid 1000 is the first account of most machines): there the reset
 * leaves the escaped processes alone and says so in its log, rather than kill a stranger's.
 * Not as root (the emulated deployment's task, under bubblewrap, where commands share the runner's
 * user), it kills every process of its PID namespace but itself and its ancestors, and only when
 * that namespace is the task's own (its pid 1 is bubblewrap, never a host's or a container's
 * init), for the same reason.
 */

interface ProcessInfo {
  pid: number;
  ppid: number;
  uid: number;
  zombie: boolean;
}

function readProcess(pid: number): ProcessInfo | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1] ?? '';
  return {
    pid,
    ppid: Number(field('PPid')),
    uid: Number(field('Uid')),
    zombie: field('State') === 'Z' || field('State') === 'X',
  };
}

function livingProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = readProcess(Number(entry));
    if (p && !p.zombie) found.push(p);
  }
  return found;
}

/**
 * True in a PID namespace made for this task alone: its pid 1 is bubblewrap (the emulated
 * deployment's tasks), never a host's or a container runtime's init.
 */
function inOwnSandboxNamespace(): boolean {
  try {
    const argv0 = readFileSync('/proc/1/cmdline', 'utf8').split('\0')[0] ?? '';
    return basename(argv0) === 'bwrap';
  } catch {
    return false;
  }
}

/**
 * True in a namespace made for the task: its pid 1 is the runner or one of its ancestors (the
 * task's init), none of those runs as the run's user, and every other process is one of the
 * runner's descendants or a process of the run's user (which a run may have left, reparented to
 * pid 1). The host's namespace fails at once (the kernel's threads are children of kthreadd, pid
 * 2, and run as root); so does a container the runner was started into (`docker exec`: its parent
 * is outside, so pid 1 is not its ancestor) or from a shell of the run's user (`sudo`).
 */
function onlyTaskProcesses(self: number, runUid: number): boolean {
  const all = livingProcesses();
  const parentOf = new Map(all.map((p) => [p.pid, p.ppid]));
  const uidOf = new Map(all.map((p) => [p.pid, p.uid]));
  const lineage = new Set<number>([self]);
  for (let p = parentOf.get(self); p !== undefined && p > 0; p = parentOf.get(p)) lineage.add(p);
  if (!lineage.has(1) || [...lineage].some((pid) => uidOf.get(pid) === runUid)) return false;
  const descendsFromSelf = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 0 && hops < 4096; hops++) {
      if (p === self) return true;
      p = parentOf.get(p);
    }
    return false;
  };
  return all.every((p) => lineage.has(p.pid) || p.uid === runUid || descendsFromSelf(p.pid));
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Kills the run's processes; true when none is left. */
function killRunProcesses(log: (msg: string, extra?: Record<string, unknown>) => void): boolean {
  const asRoot = process.getuid?.() === 0;
  const self = process.pid;
  const spared = new Set<number>([self, 1]);
  for (let p = readProcess(self); p && p.ppid > 0; p = readProcess(p.ppid)) spared.add(p.ppid);
  const targets = (): ProcessInfo[] =>
    livingProcesses().filter((p) => (asRoot ? p.uid === SANDBOX_RUN_UID : !spared.has(p.pid)));
  if (asRoot ? !onlyTaskProcesses(self, SANDBOX_RUN_UID) : !inOwnSandboxNamespace()) {
    log('reset: not in a PID namespace of its own; escaped processes are left alone');
    return true;
  }
  for (let round = 0; round < 20; round++) {
    const left = targets();
    if (left.length === 0) return true;
    if (asRoot) {
      spawnSync('/bin/sh', ['-c', 'kill -9 -1'], {
        uid: SANDBOX_RUN_UID,
        gid: SANDBOX_RUN_UID,
        stdio: 'ignore',
      });
    } else {
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    // A killed process stays listed until the kernel has torn it down.
    pause(round < 5 ? 10 : 100);
  }
  return targets().length === 0;
}

/** Removes everything inside `dir` (not `dir` itself: it may be a mount point). */
function emptyDirectory(dir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    const path = join(dir, name);
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // A directory the run made unreadable: give it back its owner's rights, then remove it.
      spawnSync('chmod', ['-R', 'u+rwx', path], { stdio: 'ignore' });
      rmSync(path, { recursive: true, force: true });
    }
  }
}

export function resetRunner(
  workDir: string,
  scratchDirs: readonly string[],
  log: (msg: string, extra?: Record<string, unknown>) => void,
): void {
  if (!killRunProcesses(log)) throw new Error('processes of the last run survived the reset');
  for (const dir of [workDir, ...scratchDirs]) emptyDirectory(dir);
}
