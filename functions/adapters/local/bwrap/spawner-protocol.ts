/**
 * The messages between the platform and its spawner process (spawner-process.ts, spawner.ts), over
 * Node's IPC channel with the `advanced` serialization (Buffers pass as they are). Types only: the
 * spawner imports nothing at run time, so it stays small.
 */

/** Per child descriptor: `in` the platform writes to it, `out` the child writes, `ignore` none. */
export type FdRole = 'in' | 'out' | 'ignore';

export type ToSpawner =
  | {
      t: 'spawn';
      id: number;
      file: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      /** Its own process group, SIGKILLed when the child exits (the unisolated sandbox). */
      detached?: boolean;
      stdio: FdRole[];
    }
  | { t: 'write'; id: number; fd: number; data?: Buffer; end?: boolean }
  | {
      t: 'kill';
      id: number;
      signal: NodeJS.Signals;
      /** The child's whole process group, not only the child. */
      group?: boolean;
    }
  /**
   * A process the child started that must die with it (bwrap's sandbox, which may still wait on
   * a block fd, before its parent-death signal is armed): killed first whenever the child is
   * killed, when the child exits, and when the platform goes; at once when it arrives after the
   * child was killed or had exited. Never once its pid belongs to another process (the spawner
   * compares start times).
   */
  | { t: 'guard'; id: number; pid: number }
  /** The platform no longer waits for this pipe of the child (it destroyed its end): nor does the spawner. */
  | { t: 'release'; id: number; fd: number };

export type FromSpawner =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'data'; id: number; fd: number; data: Buffer }
  | { t: 'error'; id: number; message: string }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };
