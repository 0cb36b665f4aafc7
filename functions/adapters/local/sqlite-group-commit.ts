import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SqliteRowCache } from './sqlite-row-cache.ts';

/**
 * The embedded store's writes, group-committed. Each write is a function run under the database's
 * write lock (its condition checks and its statements); the store hands them over through `run`.
 */
export class SqliteGroupCommit {
  /** Writes waiting for the next group commit. */
  private pending: PendingWrite[] = [];
  /** Answers sent before the writes they report were committed, whose work has not settled yet. */
  private answered = 0;
  private readonly db: DatabaseSync;
  private readonly cache: SqliteRowCache;
  /**
   * The statements every commit runs, prepared once: `exec` parses its SQL each time it runs, and
   * a call's writes run these several times. The rare ones (a rollback) stay `exec`.
   */
  private readonly sql: Record<'begin' | 'commit' | 'savepoint' | 'release', StatementSync>;

  constructor(db: DatabaseSync, cache: SqliteRowCache) {
    this.db = db;
    this.cache = cache;
    this.sql = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      savepoint: db.prepare('SAVEPOINT w'),
      release: db.prepare('RELEASE w'),
    };
  }

  /**
   * Runs `fn` (its condition checks and writes) in the next group commit: every write requested in
   * the same turn of the event loop (the requests whose I/O arrived together) shares one
   * `BEGIN IMMEDIATE … COMMIT`, each in its own savepoint, so one write's failed condition rolls
   * back only that write, and each sees the ones before it as if they had committed alone. A commit
   * is most of a write's cost (the pages of the table and its indexes appended to the WAL); under
   * load sixteen calls' admissions then cost one. The promise settles after the commit, so a caller
   * never sees its write acknowledged before it is durable in the WAL.
   */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ fn, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * An answer reporting writes requested so far has gone out before their commit
   * (sqlite-answer-first.ts): until the returned function is called (when the work the answer
   * left has settled), every read first commits whatever is pending, so whoever saw the answer
   * sees its writes, including any the work requests later (a record written alone after its
   * first transaction was refused).
   */
  answeredBeforeCommit(): () => void {
    this.answered++;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      this.answered--;
    };
  }

  /** Called before each read outside a write: see answeredBeforeCommit. */
  beforeRead(): void {
    if (this.answered > 0 && this.pending.length > 0) this.flush();
  }

  /** Commits the writes waiting now (also called at close, so none is dropped). */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 1) {
      this.commitAlone(batch[0] as PendingWrite);
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.begin();
      for (const w of batch) {
        this.sql.savepoint.run();
        try {
          outcomes.push({ ok: true, value: w.fn() });
          this.sql.release.run();
          this.cache.endWrite(true);
        } catch (error) {
          this.cache.endWrite(false);
          this.db.exec('ROLLBACK TO w');
          this.db.exec('RELEASE w');
          outcomes.push({ ok: false, error });
        }
      }
      this.commit();
    } catch (error) {
      this.cache.endTransaction(false);
      // The transaction itself failed (the database locked past the timeout, a full disk):
      // nothing of the batch was written, and every write in it fails with that error.
      if (this.db.isOpen && this.db.isTransaction) this.db.exec('ROLLBACK');
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i] as (typeof outcomes)[number];
      if (o.ok) w.resolve(o.value);
      else w.reject(o.error);
    });
  }

  /** Takes the write lock; commits by other connections until then are seen by the cache. */
  private begin(): void {
    this.sql.begin.run();
    this.cache.sync();
  }

  private commit(): void {
    this.sql.commit.run();
    this.cache.endTransaction(true);
  }

  /** A write with no company needs no savepoint: its own transaction rolls back on failure. */
  private commitAlone(w: PendingWrite): void {
    let value: unknown;
    try {
      this.begin();
      value = w.fn();
      this.commit();
    } catch (error) {
      this.cache.endTransaction(false);
      if (this.db.isOpen && this.db.isTransaction) this.db.exec('ROLLBACK');
      w.reject(error);
      return;
    }
    w.resolve(value);
  }
}

interface PendingWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
