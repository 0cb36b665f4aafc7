import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { processAlive } from './process-alive.ts';

/**
 * A data dir has one platform (`agenthost start`, local or emulated): two would both supervise
 * its services, both fire its schedules, and the one that stopped last would stop the other's
 * services. The lock is an OS file lock, SQLite's exclusive lock on <data dir>/platform.lock,
 * held for the life of the process: the kernel drops it when the process ends, however it ends,
 * so a crashed platform never leaves it stuck and a reused pid never holds it. Operator commands
 * (`accounts create`) write the store without it, as they should while the platform runs.
 *
 * The lock file itself is never removed: another starter may have it open, and a new file at
 * the same path would be a second lock. Who holds it is in <data dir>/platform.json, for the
 * message a second start prints (its pid is the node process's, not npm's).
 */
export const LOCK_FILE = 'platform.lock';
export const HOLDER_FILE = 'platform.json';
/** SQLite's "database is locked". */
const SQLITE_BUSY = 5;

export interface LockHolder {
  pid: number;
  kind: 'local' | 'emulated';
  started_at: string;
  /** Null until the platform listens. */
  url: string | null;
  port: number | null;
}

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  readonly dataDir: string;
  readonly holder: LockHolder | undefined;
  constructor(dataDir: string, holder: LockHolder | undefined) {
    const who = holder
      ? `pid ${holder.pid}, ${holder.port === null ? 'still starting, no port yet' : `port ${holder.port} (${holder.url})`}, since ${holder.started_at}`
      : 'its pid and port are not recorded yet';
    const what = holder?.kind === 'emulated' ? 'an emulated AWS deployment' : 'another agenthost platform';
    super(`the data dir ${dataDir} is in use by ${what} (${who})`);
    this.dataDir = dataDir;
    this.holder = holder;
  }
}

export interface DataDirLock {
  /** Records where this platform answers, for the message a second start prints. */
  listening(url: string): void;
  /** Lets the lock go (the process ending does too). */
  release(): void;
}

/** Takes the data dir's lock at once, or throws DataDirInUseError naming the platform holding it. */
export function lockDataDir(dataDir: string, kind: LockHolder['kind']): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    // An exclusive transaction left open: SQLite holds the file's exclusive lock until it closes.
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { errcode?: number }).errcode === SQLITE_BUSY)
      throw new DataDirInUseError(dataDir, readHolder(dataDir));
    throw err;
  }
  const holder: LockHolder = {
    pid: process.pid,
    kind,
    started_at: new Date().toISOString(),
    url: null,
    port: null,
  };
  writeHolder(dataDir, holder);
  let held = true;
  return {
    listening(url) {
      if (!held) return;
      writeHolder(dataDir, { ...holder, url, port: Number(new URL(url).port) || null });
    },
    release() {
      if (!held) return;
      held = false;
      if (readHolder(dataDir)?.pid === process.pid) rmSync(join(dataDir, HOLDER_FILE), { force: true });
      db.close();
    },
  };
}

/** Whole or not at all: a reader never sees half a file. */
function writeHolder(dataDir: string, holder: LockHolder): void {
  const file = join(dataDir, HOLDER_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(holder, null, 2)}\n`);
  renameSync(partial, file);
}

/** The holder recorded, if its process lives (a crashed holder's file stays until the next start). */
function readHolder(dataDir: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as LockHolder;
    return Number.isInteger(holder.pid) && processAlive(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}
