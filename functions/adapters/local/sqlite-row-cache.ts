import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ItemKey } from '../../ports/store.ts';

/** What the cache knows of a key: the stored row (its JSON body and ttl), or that there is none. */
export type CachedRow = { body: string; ttl: number | null } | null;

/**
 * The rows the embedded store has read or written lately, so a point read of a key it already
 * knows costs a map lookup instead of a B-tree descent: a prompt call reads the same API key,
 * account, version and membership as the call before it, and its quota counter right after
 * writing it.
 *
 * It is exact, never stale, which is what keeps the guarantees (a revoked key or a deleted version
 * stops at the next request): every write through this connection updates it when its transaction
 * commits (and forgets the key at once, so a read inside the transaction sees the uncommitted row
 * from the database), and a commit by any other connection to the file (the operator CLI, a second
 * server) changes SQLite's `PRAGMA data_version`, which `sync` reads before the cache is used and
 * which then empties it. Reads inside a write transaction use it but do not fill it, since what
 * they see may still roll back.
 */
export class SqliteRowCache {
  private readonly rows = new Map<string, CachedRow>();
  /** Rows written by the transaction being built: by the current write, and by the earlier ones kept. */
  private writing = new Map<string, CachedRow>();
  private kept = new Map<string, CachedRow>();
  private readonly dataVersion: StatementSync;
  private readonly maxRows: number;
  private seenVersion: number;
  private syncedThisTurn = false;

  /** `maxRows`: rows kept at most, the oldest forgotten first (about 1 KB each). */
  constructor(db: DatabaseSync, maxRows = 4096) {
    this.maxRows = maxRows;
    this.dataVersion = db.prepare('PRAGMA data_version');
    this.seenVersion = this.version();
  }

  /**
   * Empties the cache if another connection has committed since the last look. Outside a write
   * transaction it looks once per turn of the event loop (`syncOncePerTurn`): a request that began
   * after another process's commit was read from its socket after that commit, so the look made
   * in its turn (after the turn's I/O was polled) sees it; the look costs as much as a point read.
   */
  syncOncePerTurn(): void {
    if (this.syncedThisTurn) return;
    this.syncedThisTurn = true;
    setImmediate(() => {
      this.syncedThisTurn = false;
    });
    this.sync();
  }

  /** Empties the cache if another connection has committed since the last look. */
  sync(): void {
    const v = this.version();
    if (v !== this.seenVersion) {
      this.rows.clear();
      this.seenVersion = v;
    }
  }

  /** The cached row (null: known absent), or undefined when the key is not known. */
  lookup(key: ItemKey): CachedRow | undefined {
    return this.rows.get(cacheKey(key));
  }

  /** A row read outside any write transaction. */
  remember(key: ItemKey, row: CachedRow): void {
    this.put(cacheKey(key), row);
  }

  /** The current write of a transaction stores `row` (null: deletes) under `key`. */
  written(key: ItemKey, row: CachedRow): void {
    const k = cacheKey(key);
    this.rows.delete(k);
    this.writing.set(k, row);
  }

  /** The current write is kept (its savepoint released) or dropped (rolled back). */
  endWrite(kept: boolean): void {
    if (kept) for (const [k, row] of this.writing) this.kept.set(k, row);
    this.writing.clear();
  }

  /** The transaction committed (its kept writes become known) or failed (nothing does). */
  endTransaction(committed: boolean): void {
    this.endWrite(committed);
    if (committed) for (const [k, row] of this.kept) this.put(k, row);
    this.kept = new Map();
  }

  private put(k: string, row: CachedRow): void {
    this.rows.delete(k); // re-inserted last: the map's order is the age order
    this.rows.set(k, row);
    if (this.rows.size > this.maxRows) this.rows.delete(this.rows.keys().next().value as string);
  }

  private version(): number {
    return Number((this.dataVersion.get() as { data_version: number }).data_version);
  }
}

function cacheKey(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}
