import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Item, ItemKey } from '../../ports/store.ts';

/**
 * What the cache knows of a key: the stored row (its JSON body and ttl, and once a shared read has
 * parsed it, the frozen item it gave: SqliteStore.get), or that there is none.
 */
export type CachedRow = { body: string; ttl: number | null; shared?: Item } | null;

/**
 * The rows the embedded store has read or written lately, so a point read of a key it already
 * knows costs a map lookup instead of a B-tree descent: a prompt call reads the same API key,
 * account, version and membership as the call before it, and its quota counter right after
 * writing it. A row written without being read first (a put without a condition) is forgotten
 * rather than kept: a call's record and log lines are such writes, never read back by key.
 *
 * It is exact, never stale, which is what keeps the guarantees (a revoked key or a deleted version
 * stops at the next request): every write through this connection updates it when its transaction
 * commits (and forgets the key at once, so a read inside the transaction sees the uncommitted row
 * from the database), and a commit by any other connection to the file (the operator CLI, a second
 * server) changes SQLite's `PRAGMA data_version`, which `sync` reads before the cache is used and
 * which then empties it: before every read, or once as a request starts and then after each of its
 * reads the cache cannot answer (SqliteStore.asOneRequest). Reads inside a write transaction use it
 * but do not fill it, since what they see may still roll back.
 */
export class SqliteRowCache {
  private readonly rows = new Map<string, CachedRow>();
  /** Rows written by the transaction being built: by the current write, and by the earlier ones kept. */
  private writing = new Map<string, CachedRow | typeof UNKEPT>();
  private kept = new Map<string, CachedRow | typeof UNKEPT>();
  private readonly dataVersion: StatementSync;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private seenVersion: number;
  /** The bytes of the rows kept (their JSON bodies), bounded by `maxBytes`. */
  private bytes = 0;

  /**
   * At most `maxRows` rows and `maxBytes` of their bodies are kept, the oldest forgotten first; a
   * row over `MAX_ROW_BYTES` is not kept at all (an agent version with its skill files can be
   * hundreds of KB, and a tenant decides its size).
   */
  constructor(db: DatabaseSync, maxRows = 4096, maxBytes = 8 * 1024 * 1024) {
    this.maxRows = maxRows;
    this.maxBytes = maxBytes;
    this.dataVersion = db.prepare('PRAGMA data_version');
    this.seenVersion = this.version();
  }

  /**
   * Empties the cache if another connection has committed since the last look, and says whether it
   * did: called before each read outside a write transaction, or as a request starts and after each
   * of its database reads (SqliteStore.asOneRequest), and after BEGIN IMMEDIATE inside one.
   * (Looking once per turn of the event loop was tried: a turn's boundary in Node is not where new
   * requests arrive, and a revoked key was read from the cache by a request sent after the
   * revocation committed. A request's own start is that boundary.)
   */
  sync(): boolean {
    const v = this.version();
    if (v === this.seenVersion) return false;
    this.clear();
    this.seenVersion = v;
    return true;
  }

  clear(): void {
    this.rows.clear();
    this.bytes = 0;
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
    this.forget(k);
    this.writing.set(k, row);
  }

  /**
   * The current write of a transaction stores a row under `key` that is not worth keeping: the key
   * is forgotten, and stays so when the transaction commits (see SqliteStore.upsert).
   */
  writtenUnkept(key: ItemKey): void {
    const k = cacheKey(key);
    this.forget(k);
    this.writing.set(k, UNKEPT);
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

  private put(k: string, row: CachedRow | typeof UNKEPT): void {
    this.forget(k); // re-inserted last: the map's order is the age order
    if (row === UNKEPT || (row && row.body.length > MAX_ROW_BYTES)) return;
    this.rows.set(k, row);
    this.bytes += rowBytes(row);
    while (this.rows.size > this.maxRows || this.bytes > this.maxBytes)
      this.forget(this.rows.keys().next().value as string);
  }

  private forget(k: string): void {
    const row = this.rows.get(k);
    if (row === undefined) return;
    this.rows.delete(k);
    this.bytes -= rowBytes(row);
  }

  /**
   * A shared read parsed `row`, which the cache holds under `key`, into `item`: kept with it, and
   * counted as its body's bytes once more. A row the cache no longer holds keeps nothing.
   */
  share(key: ItemKey, row: NonNullable<CachedRow>, item: Item): void {
    const k = cacheKey(key);
    if (this.rows.get(k) !== row || row.shared) return;
    row.shared = item;
    this.bytes += row.body.length;
    while (this.bytes > this.maxBytes) this.forget(this.rows.keys().next().value as string);
  }

  private version(): number {
    return Number((this.dataVersion.get() as { data_version: number }).data_version);
  }
}

/** A write's row that the cache forgets rather than keeps (writtenUnkept). */
const UNKEPT = Symbol('unkept');

/** A row whose JSON body is longer than this is read from the database every time. */
const MAX_ROW_BYTES = 64 * 1024;

function cacheKey(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

/** What a row counts against the cache's bytes: its body, twice once a shared read parsed it. */
function rowBytes(row: CachedRow): number {
  return row ? (row.shared ? 2 * row.body.length : row.body.length) : 0;
}
