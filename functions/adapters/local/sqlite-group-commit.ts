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
  /** Statements that changed rows, counted by the store (changed). */
  private changes = 0;
  private readonly db: DatabaseSync;
  private readonly cache: SqliteRowCache;
  /**
   * The statements every commit runs, prepared once: `exec` parses its SQL each time it runs, and
   * a call's writes run these several times. The rare ones (a rollback) stay `exec`.
   */
  private readonly sql: Record<'begin' | 'commit' | 'savepoint' | 'release', StatementSync>;

  /** Told of each commit (the WAL's checkpointer). */
  private readonly afterCommit: () => void;

  constructor(db: DatabaseSync, cache: SqliteRowCache, afterCommit: () => void = () => {}) {
    this.db = db;
    this.cache = cache;
    this.afterCommit = afterCommit;
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
   * `BEGIN IMMEDIATE … COMMIT`; one write's failure undoes only that write (flush), and each sees
   * the ones before it as if they had committed alone. A commit is most of a write's cost (the
   * pages of the table and its indexes appended to the WAL); under load sixteen calls' admissions
   * then cost one. The promise settles after the commit, so a caller
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

  /**
   * Called by the store after each statement that changes rows inside a write: a write that fails
   * after one (rare: SQLite's own errors) needs a savepoint to be undone alone (flush).
   */
  changed(): void {
    this.changes++;
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
    // Without savepoints first: a write whose condition fails (ConditionFailedError, a canceled
    // transaction) throws before any statement changes a row, so it leaves nothing to undo, and
    // SAVEPOINT and RELEASE around every write cost two statements and the bookkeeping of a
    // savepoint each (about a fifth of the store's CPU a call under load). A write that fails
    // after changing rows needs its own savepoint: then the batch is rolled back and run again,
    // each write in one.
    let outcomes = this.commitBatch(batch, false);
    if (outcomes === RETRY) outcomes = this.commitBatch(batch, true);
    if (outcomes === RETRY || outcomes === FAILED) return;
    batch.forEach((w, i) => {
      const o = outcomes[i] as Outcome;
      if (o.ok) w.resolve(o.value);
      else w.reject(o.error);
    });
  }

  /**
   * Runs `batch` in one transaction, each write in a savepoint when `savepoints`, and commits it.
   * RETRY when a write failed after changing rows without a savepoint (rolled back, nothing
   * settled); FAILED when the transaction failed (every write rejected).
   */
  private commitBatch(batch: PendingWrite[], savepoints: boolean): Outcome[] | typeof RETRY | typeof FAILED {
    const outcomes: Outcome[] = [];
    try {
      this.begin();
      for (const w of batch) {
        if (savepoints) this.sql.savepoint.run();
        const changesBefore = this.changes;
        try {
          outcomes.push({ ok: true, value: w.fn() });
          if (savepoints) this.sql.release.run();
          this.cache.endWrite(true);
        } catch (error) {
          this.cache.endWrite(false);
          if (savepoints) {
            this.db.exec('ROLLBACK TO w');
            this.db.exec('RELEASE w');
          } else if (this.changes !== changesBefore || !this.db.isTransaction) {
            this.cache.endTransaction(false);
            if (this.db.isTransaction) this.db.exec('ROLLBACK');
            return RETRY;
          }
          outcomes.push({ ok: false, error });
        }
      }
      this.commit();
      return outcomes;
    } catch (error) {
      this.cache.endTransaction(false);
      // The transaction itself failed (the database locked past the timeout, a full disk):
      // nothing of the batch was written, and every write in it fails with that error.
      if (this.db.isOpen && this.db.isTransaction) this.db.exec('ROLLBACK');
      for (const w of batch) w.reject(error);
      return FAILED;
    }
  }

  /** Takes the write lock; commits by other connections until then are seen by the cache. */
  private begin(): void {
    this.sql.begin.run();
    this.cache.sync();
  }

  private commit(): void {
    this.sql.commit.run();
    this.cache.endTransaction(true);
    this.afterCommit();
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

const RETRY = Symbol('retry with savepoints');
const FAILED = Symbol('failed');

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface PendingWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
