import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openItemsTable } from './sqlite-schema.ts';

/**
 * The embedded store's database file, opened with its settings and its table ready: WAL, so
 * readers never wait for the writer; `synchronous = NORMAL`, durable at each checkpoint and never
 * corrupt; a 10 s wait for another process's write lock. A file that cannot be opened leaves no
 * handle on it. The file is created readable by its owner only, as the data dir
 * (platform/data-dir-permissions.ts): SQLite gives its -wal and -shm files the database's mode.
 */
export function openStoreDatabase(path: string, log?: (message: string) => void): DatabaseSync {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Made first when missing (SQLite would make it 0644); an existing file keeps its mode.
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new DatabaseSync(path, { timeout: 10_000 });
  try {
    db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
    `);
    openItemsTable(db, log);
    // temp_store = MEMORY keeps the rollback journals of savepoints and statements in memory.
    // Each write of a group commit runs in a savepoint, and each statement in it journals the
    // pages it changes again: a call's record write journals well over 64 KiB, past which SQLite
    // spills that journal to a temporary file and writes every later page to it (two system
    // calls a page, up to 17 a call under load). The journal is only read to roll back one write
    // and never outlives the transaction, so the disk buys nothing (docs/performance.md, item 16).
    // It also keeps sorts and temporary tables in memory, so it is set after the one-time move of
    // an older table (openItemsTable), whose index builds sort every row; the store's own queries
    // read in index order and its transactions are bounded (100 items).
    db.exec('PRAGMA temp_store = MEMORY');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
