import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { processAlive } from '../shared/process-alive.ts';

/**
 * A data dir has one platform (`agenthost start`, local or emulated): two would both supervise
 * its services, both fire its schedules, the one that stopped last would stop the other's
 * services, and a starting platform's housekeeping settles every run and paid call in flight as
 * cut off by a crash (refunds them), which is true only when no other platform runs there.
 *
 * Two locks, both held for the life of the process and dropped by the kernel when it ends, however
 * it ends (a crashed platform never leaves them stuck, a reused pid never holds them):
 *
 * - On Linux, an abstract Unix socket named after the data dir's device and inode. It is no file:
 *   nothing in the data dir can be renamed, deleted or replaced to free it, and it names the data
 *   dir itself, whatever path reaches it (a symlink, a bind mount, the dir renamed). A second
 *   platform on the same data dir fails to bind it, and asks it who holds it. Abstract names
 *   belong to a network namespace, hence the second lock.
 * - SQLite's exclusive lock on <data dir>/platform.lock (an open exclusive transaction), which two
 *   processes in different network namespaces (containers sharing a volume) and other systems see.
 *   A lock file alone is not enough: renamed while its platform runs, the path is free again for a
 *   second one, which is why the socket comes first. The file is never removed by the platform:
 *   another starter may have it open, and a new file at the same path would be a second lock.
 *   Something else at that path (a directory, a file that is not a database) is named as such.
 *
 * Who holds the lock is in <data dir>/platform.json too, for the message a second start prints
 * where the socket does not answer (its pid is the node process's, not npm's). Operator commands
 * (`accounts create`) write the store without the lock, as they should while the platform runs.
 */
export const LOCK_FILE = 'platform.lock';
export const HOLDER_FILE = 'platform.json';
/** SQLite's "database is locked". */
const SQLITE_BUSY = 5;
/** SQLite's "file is not a database". */
const SQLITE_NOTADB = 26;
/** How long a second start waits for the holder to say who it is (its event loop may be busy). */
const HOLDER_ANSWER_MS = 2_000;
/** The most a holder's answer may be: a few hundred bytes of JSON. */
const HOLDER_ANSWER_MAX_BYTES = 64 * 1024;

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
      : 'its pid and port are not recorded';
    const what = holder?.kind === 'emulated' ? 'an emulated AWS deployment' : 'another agenthost platform';
    super(`the data dir ${dataDir} is in use by ${what} (${who})`);
    this.dataDir = dataDir;
    this.holder = holder;
  }
}

/** Something that is not the platform's lock file sits at its path: what it is, and how to clear it. */
export class LockPathError extends Error {
  override name = 'LockPathError';
  readonly path: string;
  constructor(path: string, what: string) {
    super(`${path} is ${what}, not agenthost's lock file; the platform cannot lock its data dir`);
    this.path = path;
  }
}

export interface DataDirLock {
  /** Records where this platform answers, for the message a second start prints. */
  listening(url: string): void;
  /** Lets the lock go (the process ending does too). */
  release(): void;
}

/**
 * Takes the data dir's locks at once, or throws DataDirInUseError naming the platform holding
 * them, or LockPathError when the lock file's path holds something else.
 */
export async function lockDataDir(dataDir: string, kind: LockHolder['kind']): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const holder: LockHolder = {
    pid: process.pid,
    kind,
    started_at: new Date().toISOString(),
    url: null,
    port: null,
  };
  const socket = await holdDataDirName(dataDir, () => holder);
  let db: DatabaseSync;
  try {
    db = lockFile(dataDir);
  } catch (err) {
    socket?.close();
    throw err;
  }
  writeHolder(dataDir, holder);
  let held = true;
  return {
    listening(url) {
      if (!held) return;
      holder.url = url;
      holder.port = Number(new URL(url).port) || null;
      writeHolder(dataDir, holder);
    },
    release() {
      if (!held) return;
      held = false;
      if (readHolder(dataDir)?.pid === process.pid) rmSync(join(dataDir, HOLDER_FILE), { force: true });
      db.close();
      socket?.close();
    },
  };
}

/** The abstract socket's name for the data dir: its identity on this machine, not its path. */
function dataDirName(dataDir: string): string {
  const { dev, ino } = statSync(dataDir, { bigint: true });
  return `\0agenthost/data-dir/${dev}:${ino}`;
}

/**
 * Binds the data dir's abstract socket, which answers whoever connects with the holder's record;
 * undefined where there are no abstract sockets (other systems than Linux).
 */
async function holdDataDirName(dataDir: string, holder: () => LockHolder): Promise<Server | undefined> {
  if (process.platform !== 'linux') return undefined;
  const name = dataDirName(dataDir);
  const server = createServer((connection) => {
    connection.on('error', () => connection.destroy());
    connection.end(JSON.stringify(holder()));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(name, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new DataDirInUseError(dataDir, (await askHolder(name)) ?? readHolder(dataDir));
  }
  // Held, not waited on: the platform's own server keeps the process alive.
  server.unref();
  return server;
}

/** What the process holding the data dir's socket says it is, if it answers as a platform does. */
function askHolder(name: string): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const connection = createConnection(name);
    const done = (holder: LockHolder | undefined) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(holder);
    };
    const timer = setTimeout(() => done(undefined), HOLDER_ANSWER_MS);
    connection.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > HOLDER_ANSWER_MAX_BYTES) done(undefined);
      else chunks.push(chunk);
    });
    connection.on('end', () => done(parseHolder(Buffer.concat(chunks).toString('utf8'))));
    connection.on('error', () => done(undefined));
  });
}

/** SQLite's exclusive lock on <data dir>/platform.lock, held by the returned connection. */
function lockFile(dataDir: string): DatabaseSync {
  const path = join(dataDir, LOCK_FILE);
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (found?.isDirectory()) throw new LockPathError(path, 'a directory');
  if (found && !found.isFile() && !found.isSymbolicLink())
    throw new LockPathError(path, 'not a regular file');
  let db: DatabaseSync | undefined;
  try {
    // Made first when missing, readable by its owner only (SQLite would make it 0644; its journal
    // takes the file's mode).
    if (!found) closeSync(openSync(path, 'a', 0o600));
    db = new DatabaseSync(path, { timeout: 0 });
    // An exclusive transaction left open: SQLite holds the file's exclusive lock until it closes.
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
    return db;
  } catch (err) {
    db?.close();
    const code = (err as { errcode?: number }).errcode;
    if (code === SQLITE_BUSY) throw new DataDirInUseError(dataDir, readHolder(dataDir));
    if (code === SQLITE_NOTADB) throw new LockPathError(path, 'a file that is not an SQLite database');
    // A symlink to a directory or to nowhere, a file this user may not write...
    throw new LockPathError(path, `unusable (${(err as Error).message})`);
  }
}

/** Whole or not at all: a reader never sees half a file. Readable by this user only, as the data dir. */
function writeHolder(dataDir: string, holder: LockHolder): void {
  const file = join(dataDir, HOLDER_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(holder, null, 2)}\n`, { mode: 0o600 });
  renameSync(partial, file);
}

/** The holder recorded, if its process lives (a crashed holder's file stays until the next start). */
function readHolder(dataDir: string): LockHolder | undefined {
  try {
    const holder = parseHolder(readFileSync(join(dataDir, HOLDER_FILE), 'utf8'));
    return holder && processAlive(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(text) as LockHolder;
    return Number.isInteger(holder?.pid) && holder.pid > 0 ? holder : undefined;
  } catch {
    return undefined;
  }
}
