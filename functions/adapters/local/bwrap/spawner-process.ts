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
import type { Readable, Writable } from 'node:stream';
import type { FromSpawner, ToSpawner } from './spawner-protocol.ts';

const children = new Map<number, ChildProcess>();

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
    send({ t: 'close', id: m.id, code, signal });
  });
}

function kill(m: Extract<ToSpawner, { t: 'kill' }>): void {
  const child = children.get(m.id);
  if (!child) return;
  const running = child.exitCode === null && child.signalCode === null;
  for (const pid of running ? (m.alsoPids ?? []) : []) {
    try {
      process.kill(pid, m.signal);
    } catch {
      // already gone
    }
  }
  try {
    if (m.group && child.pid !== undefined) process.kill(-child.pid, m.signal);
    else if (running) child.kill(m.signal);
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
});

// The platform is gone (also when it was SIGKILLed): so are its runs.
process.on('disconnect', () => {
  for (const child of children.values()) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(0);
});
