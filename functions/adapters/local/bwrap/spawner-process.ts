/**
 * The spawner: a small long-lived child of the platform that starts the sandboxes' processes for
 * it. fork() copies the page tables of the process that calls it, so child_process.spawn in the
 * platform (hundreds of MB) stalls its event loop for milliseconds per run, for every tenant; here
 * it costs what this small process costs, and stalls only this loop. Each child's pipes are relayed
 * over the IPC channel (spawner-protocol.ts). Started by spawner.ts; it exits when the platform
 * goes (the channel closes), and its children's sandboxes die with it (bwrap --die-with-parent).
 *
 * Run-time imports: node built-ins only, so that it starts fast and stays small.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import type { Readable, Writable } from 'node:stream';
import type { FromSpawner, ToSpawner } from './spawner-protocol.ts';

const children = new Map<number, ChildProcess>();
/**
 * Per child: the processes that die with it (the `guard` message), each with its start time, so
 * that a pid that has since been reused by another process is never signalled.
 */
const guarded = new Map<number, { pid: number; start: string }[]>();
/** Children the platform asked to SIGKILL: a guard that arrives after that is killed at once. */
const killed = new Set<number>();

/**
 * Descriptors this process inherited without close-on-exec (whatever the platform's own parent
 * left open): closed at start, so that a child gets the descriptors it is given and nothing else,
 * which lets the sandbox's init shell close exactly those (inner-command.ts). Node opens its own
 * with close-on-exec, the IPC channel included.
 */
function closeStrayDescriptors(): void {
  const O_CLOEXEC = 0o2000000;
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= 2) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // the directory's own descriptor, gone by now
    }
  }
}
closeStrayDescriptors();

/**
 * A message to the platform. A platform that has just died fails the write (EPIPE) before the
 * channel's 'disconnect' arrives; unhandled, that error would end this process with its runs
 * still going. The callback takes it, and the runs end as on a disconnect.
 */
function send(message: FromSpawner): void {
  if (!process.connected) return;
  process.send?.(message, undefined, {}, (err) => {
    if (err) platformGone();
  });
}

function start(m: Extract<ToSpawner, { t: 'spawn' }>): void {
  let child: ChildProcess;
  try {
    child = spawn(m.file, m.args, {
      env: m.env,
      stdio: m.stdio.map((role) => (role === 'ignore' ? 'ignore' : 'pipe')),
      ...(m.cwd ? { cwd: m.cwd } : {}),
      ...(m.detached ? { detached: true } : {}),
    });
  } catch (err) {
    send({ t: 'error', id: m.id, message: (err as Error).message });
    send({ t: 'close', id: m.id, code: null, signal: null });
    return;
  }
  children.set(m.id, child);
  child.on('spawn', () => send({ t: 'spawned', id: m.id, pid: child.pid! }));
  child.on('error', (err) => send({ t: 'error', id: m.id, message: err.message }));
  m.stdio.forEach((role, fd) => {
    const stream = child.stdio[fd] as (Readable & Writable) | null;
    if (!stream) return;
    stream.on('error', () => {}); // EPIPE when the child does not read; the exit says the rest
    if (role === 'out') stream.on('data', (data: Buffer) => send({ t: 'data', id: m.id, fd, data }));
  });
  child.on('exit', (code, signal) => {
    // bwrap that died before releasing its sandbox's first process (killed before the platform's
    // guard arrived, or failed): that process waits on a block forever, holding the child's pipes.
    killGuarded(m.id);
    // What the command left in its process group goes with it (the platform would ask too late).
    if (m.detached && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    send({ t: 'exit', id: m.id, code, signal });
  });
  child.on('close', (code, signal) => {
    children.delete(m.id);
    guarded.delete(m.id);
    killed.delete(m.id);
    send({ t: 'close', id: m.id, code, signal });
  });
}

/** The start time of `pid` (field 22 of /proc/PID/stat), or undefined once it is gone. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name, which may hold spaces and parentheses: field 3 onwards.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * SIGKILLs what the child guards, each only while it is still the process that was guarded (its
 * start time unchanged), so a pid reused since is never hit.
 */
function killGuarded(id: number): void {
  for (const { pid, start } of guarded.get(id) ?? []) {
    if (startTimeOf(pid) !== start) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * The child's own children (bwrap's: its sandbox's first process), read while the child still
 * runs, so those pids are certainly its. Killed before the child: bwrap killed first would leave a
 * sandbox that still waits on it blocked for good (no parent-death signal is armed yet).
 */
function killChildrenOf(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${child.pid}/task`);
  } catch {
    return; // gone
  }
  for (const tid of tasks) {
    let list = '';
    try {
      list = readFileSync(`/proc/${child.pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue; // gone, or a kernel without CONFIG_PROC_CHILDREN: the guards still hold
    }
    for (const pid of list.split(' ').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/**
 * A process to kill with the child. Arriving after the child was killed or had exited (the
 * platform learns the pid a round trip after bwrap reports it, and may have asked for the kill
 * meanwhile), it is killed at once: its parent will never release it.
 */
function guard(m: Extract<ToSpawner, { t: 'guard' }>): void {
  const start = startTimeOf(m.pid);
  if (start === undefined) return;
  const child = children.get(m.id);
  if (!child) {
    // Closed already: nothing will come for it, so nothing is kept for it either.
    try {
      process.kill(m.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    return;
  }
  guarded.set(m.id, [...(guarded.get(m.id) ?? []), { pid: m.pid, start }]);
  if (killed.has(m.id) || child.exitCode !== null || child.signalCode !== null) killGuarded(m.id);
}

function kill(m: Extract<ToSpawner, { t: 'kill' }>): void {
  const child = children.get(m.id);
  if (!child) return;
  if (m.signal === 'SIGKILL') {
    killed.add(m.id);
    killGuarded(m.id);
    killChildrenOf(child);
  }
  try {
    if (m.group && child.pid !== undefined) process.kill(-child.pid, m.signal);
    else if (child.exitCode === null && child.signalCode === null) child.kill(m.signal);
  } catch {
    // already gone
  }
}

process.on('message', (m: ToSpawner) => {
  if (m.t === 'spawn') start(m);
  else if (m.t === 'write') {
    const stream = children.get(m.id)?.stdio[m.fd] as Writable | null | undefined;
    if (!stream) return;
    if (m.data) stream.write(m.data);
    if (m.end) stream.end();
  } else if (m.t === 'kill') kill(m);
  else if (m.t === 'guard') guard(m);
  else if (m.t === 'release') {
    // The platform stopped waiting for this child's pipes (a kill that a process stuck in the
    // kernel outlives): without them, 'close' follows the exit.
    (children.get(m.id)?.stdio[m.fd] as Readable | Writable | null | undefined)?.destroy();
  }
});

// The platform is gone (also when it was SIGKILLed): so are its runs.
process.on('disconnect', platformGone);

function platformGone(): void {
  for (const [id, child] of children) {
    killGuarded(id);
    killChildrenOf(child);
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(0);
}

// Its compiled program written to the platform's compile cache now (when it keeps one: spawner.ts),
// not at exit, which a spawner killed by SIGKILL never reaches.
flushCompileCache();
