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
import type { Readable, Writable } from 'node:stream';
import type { FromSpawner, ToSpawner } from './spawner-protocol.ts';

const children = new Map<number, ChildProcess>();
/** Per child: the processes that die with it (the `guard` message). */
const guarded = new Map<number, number[]>();

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

function send(message: FromSpawner): void {
  process.send?.(message);
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
    send({ t: 'close', id: m.id, code, signal });
  });
}

/** SIGKILLs what the child guards, while the child still runs (then those pids are still its own). */
function killGuarded(id: number, child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  for (const pid of guarded.get(id) ?? []) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function kill(m: Extract<ToSpawner, { t: 'kill' }>): void {
  const child = children.get(m.id);
  if (!child) return;
  if (m.signal === 'SIGKILL') killGuarded(m.id, child);
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
  else if (m.t === 'guard') guarded.set(m.id, [...(guarded.get(m.id) ?? []), m.pid]);
});

// The platform is gone (also when it was SIGKILLed): so are its runs.
process.on('disconnect', () => {
  for (const [id, child] of children) {
    killGuarded(id, child);
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(0);
});
