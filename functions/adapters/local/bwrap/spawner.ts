/**
 * The platform's side of the spawner process (spawner-process.ts): `spawn` returns a child that
 * behaves, for supervise-child.ts and the sessions, like Node's ChildProcess (stdio streams, pid,
 * exitCode, 'spawn'/'error'/'exit'/'close'), while the fork and exec happen in the spawner, so they
 * never stall the platform's event loop. The spawner starts on the first spawn and again after it
 * died; its death fails the runs it had in flight (an 'error', then exit by SIGKILL), never hangs
 * them.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { getCompileCacheDir } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FdRole, FromSpawner, ToSpawner } from './spawner-protocol.ts';

/**
 * The spawner's program beside this module: the source, or (where this module was bundled, as a
 * test bundles it to run as another user) a build of it named .mjs; undefined when neither is
 * there, and the sandboxes then fork in-process (Spawner.available).
 */
const SPAWNER_ENTRY = ['./spawner-process.ts', './spawner-process.mjs']
  .map((name) => fileURLToPath(new URL(name, import.meta.url)))
  .find((path) => existsSync(path));

/**
 * The spawner's environment: nothing of the platform's (each child gets the env it is given), but
 * a compile cache when the platform keeps one (bin/agenthost.ts; npm test's processes): the
 * spawner's own, inside the platform's (Node keys a cache's entries by its version, under the
 * directory it is given), which it fills as it starts (spawner-process.ts). A spawner's start then
 * reads its stripped and compiled program instead of loading Node's TypeScript stripper: 45
 * against 135 ms of CPU, paid at the first run after each start of the platform, and by the test
 * suite about 140 times (docs/sandbox.md).
 */
function spawnerEnv(): Record<string, string> {
  const cache = getCompileCacheDir();
  return cache ? { NODE_COMPILE_CACHE: cache } : {};
}

export interface SpawnOptions {
  env: Record<string, string>;
  cwd?: string;
  detached?: boolean;
  /** Per descriptor: `in` (the platform writes), `out` (the child writes) or `ignore`. */
  stdio: FdRole[];
}

/** A child started by the spawner, shaped like the parts of ChildProcess the sandboxes use. */
export class RemoteChild extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdio: (Readable | Writable | null)[];
  private readonly spawner: Spawner;
  private readonly id: number;
  private closed = false;
  private readonly guarded: number[] = [];

  constructor(spawner: Spawner, id: number, roles: FdRole[]) {
    super();
    this.spawner = spawner;
    this.id = id;
    // Destroying a pipe before the child closed (superviseChild gives up on the pipes some time
    // after a kill) releases the spawner's end too, as with ChildProcess: 'close' then follows the
    // exit even when a process stuck in the kernel still holds the pipe.
    const release = (fd: number) => (error: Error | null, callback: (error: Error | null) => void) => {
      if (!this.closed) spawner.send({ t: 'release', id, fd });
      callback(error);
    };
    this.stdio = roles.map((role, fd) => {
      if (role === 'out') return new Readable({ read() {}, destroy: release(fd) });
      if (role === 'in')
        return new Writable({
          // Not destroyed at its end: a destroy releases the spawner's end of the pipe, which drops
          // whatever the spawner has not yet written into it (a child reads its stdin at its own
          // pace, 64 KiB of pipe at a time). Auto-destroyed, every stdin, and bwrap's options with
          // the session's env on fd 3, would be cut at about 143 KiB. Ended, the spawner
          // writes all of it and then closes the pipe; only an explicit destroy (a kill) releases.
          autoDestroy: false,
          write: (chunk: Buffer, _encoding, callback) => {
            if (chunk.length > 0) spawner.send({ t: 'write', id, fd, data: chunk });
            callback();
          },
          final: (callback) => {
            spawner.send({ t: 'write', id, fd, end: true });
            callback();
          },
          destroy: release(fd),
        });
      return null;
    });
  }

  get stdin(): Writable | null {
    return this.stdio[0] as Writable | null;
  }
  get stdout(): Readable | null {
    return this.stdio[1] as Readable | null;
  }
  get stderr(): Readable | null {
    return this.stdio[2] as Readable | null;
  }

  /** Signals the child (its process group with `group`); SIGKILL also kills what it guards. */
  kill(signal: NodeJS.Signals = 'SIGTERM', options: { group?: boolean } = {}): boolean {
    if (this.closed) return false;
    this.spawner.send({ t: 'kill', id: this.id, signal, ...options });
    return true;
  }

  /**
   * `pid` (a process the child started) dies with the child: SIGKILLed by the spawner whenever it
   * kills the child, when the child exits, at once if the child was killed or had exited before
   * this arrived (the spawner knows that for certain, the platform does not), when the platform
   * goes, and by this process if the spawner itself dies.
   */
  guard(pid: number): void {
    if (this.closed) return;
    this.guarded.push(pid);
    this.spawner.send({ t: 'guard', id: this.id, pid });
  }

  /** @internal The spawner died: what the child guarded may have outlived it. */
  orphaned(): void {
    for (const pid of this.closed ? [] : this.guarded) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.receive({ t: 'error', id: this.id, message: "the sandbox's spawner process exited" });
    this.receive({ t: 'exit', id: this.id, code: null, signal: 'SIGKILL' });
    this.receive({ t: 'close', id: this.id, code: null, signal: 'SIGKILL' });
  }

  /** @internal The spawner's report about this child. */
  receive(m: FromSpawner): void {
    if (this.closed) return;
    if (m.t === 'spawned') {
      this.pid = m.pid;
      this.emit('spawn');
    } else if (m.t === 'data') {
      (this.stdio[m.fd] as Readable | null)?.push(m.data);
    } else if (m.t === 'error') {
      this.emit('error', new Error(m.message));
    } else if (m.t === 'exit') {
      this.exitCode = m.code;
      this.signalCode = m.signal;
      this.emit('exit', m.code, m.signal);
    } else if (m.t === 'close') {
      if (this.exitCode === null && this.signalCode === null) {
        this.exitCode = m.code;
        this.signalCode = m.signal;
      }
      this.closed = true;
      for (const s of this.stdio) {
        if (s instanceof Readable) s.push(null);
        else s?.destroy();
      }
      // As with ChildProcess: 'close' after the last output has been delivered.
      setImmediate(() => this.emit('close', m.code, m.signal));
    }
  }
}

/** One spawner process at a time, started lazily; see the module comment. */
export class Spawner {
  private process: ChildProcess | undefined;
  private readonly children = new Map<number, RemoteChild>();
  private nextId = 1;

  /** Whether the spawner's program can be found (see SPAWNER_ENTRY). */
  static available(): boolean {
    return SPAWNER_ENTRY !== undefined;
  }

  /** The spawner's pid while it runs (for tests and benches). */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  spawn(file: string, args: string[], options: SpawnOptions): RemoteChild {
    const proc = this.ensureStarted();
    const id = this.nextId++;
    const child = new RemoteChild(this, id, options.stdio);
    this.children.set(id, child);
    // In flight: the channel keeps the platform's process alive until the child has closed.
    proc.channel?.ref();
    this.send({
      t: 'spawn',
      id,
      file,
      args,
      env: options.env,
      stdio: options.stdio,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.detached ? { detached: true } : {}),
    });
    return child;
  }

  /** @internal */
  send(message: ToSpawner): void {
    const proc = this.process;
    if (!proc?.connected) return; // its exit fails every child it had
    proc.send(message);
  }

  /** Ends the spawner (its children die with it: see spawner-process.ts). */
  stop(): void {
    this.process?.kill('SIGKILL');
  }

  private ensureStarted(): ChildProcess {
    if (this.process) return this.process;
    const proc = fork(SPAWNER_ENTRY!, [], {
      serialization: 'advanced',
      // stderr shared: a crash of the spawner itself is seen in the platform's log.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: ['--disable-warning=ExperimentalWarning', '--max-old-space-size=64'],
      env: spawnerEnv(),
    });
    this.process = proc;
    proc.on('message', (m: FromSpawner) => {
      const child = this.children.get(m.id);
      if (!child) return;
      if (m.t === 'close') this.forget(m.id);
      child.receive(m);
    });
    proc.on('error', () => {}); // a failed send; the exit below fails the children
    proc.on('exit', () => {
      if (this.process === proc) this.process = undefined;
      const orphans = [...this.children.entries()];
      this.children.clear();
      for (const [, child] of orphans) child.orphaned();
    });
    // Idle, the spawner never keeps the platform's process alive.
    proc.unref();
    proc.channel?.unref();
    return proc;
  }

  private forget(id: number): void {
    this.children.delete(id);
    if (this.children.size === 0) this.process?.channel?.unref();
  }
}
