import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import {
  type Condition,
  ConditionFailedError,
  type Item,
  type ItemKey,
  type QueryPage,
  type QuerySpec,
  type ReadOptions,
  type Store,
  TransactionCanceledError,
  type TransactOp,
  type UpdateSpec,
  type WriteOptions,
} from '../../ports/store.ts';
import { deepFreeze } from '../../shared/deep-freeze.ts';
import { evaluateCondition, validateEach, validateTransaction } from '../store-semantics.ts';
import { decodeCursor, encodeCursor } from './sqlite-cursor.ts';
import { openStoreDatabase } from './sqlite-database.ts';
import { SqliteGroupCommit } from './sqlite-group-commit.ts';
import { indexColumns, keptColumns } from './sqlite-index-columns.ts';
import { type CachedRow, SqliteRowCache } from './sqlite-row-cache.ts';
import { SqliteWalCheckpointer } from './sqlite-wal-checkpointer.ts';

type Row = { body: string };
type RowWithTtl = { body: string; ttl: number | null };

/**
 * How long a request's reads may go without looking for other connections' commits after its one
 * look (asOneRequest): longer than a prompt call takes under load, short enough that an operator's
 * change reaches a long request's later reads (a tool loop's sub-calls) within it.
 */
export const REQUEST_READ_WINDOW_MS = 250;

/**
 * The embedded Store: one SQLite file (WAL) through node:sqlite. Every write runs in a
 * `BEGIN IMMEDIATE` transaction (shared by the writes of one event-loop turn: sqlite-group-commit.ts), so a
 * condition is checked and the write applied under the database's write lock: atomic within this
 * process (node:sqlite is synchronous) and across processes sharing the file (the operator CLI
 * while the server runs).
 */
export class SqliteStore implements Store {
  private readonly db: DatabaseSync;
  private readonly nowSeconds: () => number;
  private readonly statements = new Map<string, StatementSync>();
  private readonly cache: SqliteRowCache;
  private readonly commits: SqliteGroupCommit;
  /** The request whose reads run now (asOneRequest), with the end of its window. */
  private readonly request = new AsyncLocalStorage<{ until: number }>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly checkpointer: SqliteWalCheckpointer;

  constructor(
    path: string,
    options: {
      nowSeconds?: () => number;
      sweepIntervalMs?: number;
      /** Where a progress line goes (the one-time move of an earlier version's table). */
      log?: (message: string) => void;
      /** When the WAL checkpoints move to their worker thread (sqlite-wal-checkpointer.ts). */
      checkpoints?: { delayMs?: number; startAfterCommits?: number };
    } = {},
  ) {
    this.db = openStoreDatabase(path, options.log);
    this.nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
    this.cache = new SqliteRowCache(this.db);
    this.checkpointer = new SqliteWalCheckpointer(this.db, path, options.checkpoints);
    this.commits = new SqliteGroupCommit(this.db, this.cache, () => this.checkpointer.committed());
    this.sweepExpired();
    const interval = options.sweepIntervalMs ?? 10 * 60_000;
    this.sweepTimer = setInterval(() => this.sweepExpired(), interval);
    this.sweepTimer.unref();
  }

  async get(key: ItemKey, options?: ReadOptions): Promise<Item | undefined> {
    this.commits.beforeRead();
    return this.read(key, false, options?.shared === true);
  }

  async put(item: Item, options: WriteOptions = {}): Promise<void> {
    return this.commits.run(() => {
      // Without a condition the item as it is does not matter (and a new key's is not there).
      const current = options.condition !== undefined ? this.check(item, options.condition) : undefined;
      this.upsert(item, current, options.condition !== undefined);
    });
  }

  async update(key: ItemKey, spec: UpdateSpec, options: WriteOptions = {}): Promise<Item> {
    return this.commits.run(() => {
      const current = this.check(key, options.condition);
      const next = applyUpdate(key, current, spec);
      this.upsert(next, current);
      return next;
    });
  }

  async delete(key: ItemKey, options: WriteOptions = {}): Promise<Item | undefined> {
    return this.commits.run(() => {
      const current = this.check(key, options.condition);
      this.remove(key);
      return current;
    });
  }

  async atomicAdd(
    key: ItemKey,
    attr: string,
    delta: number,
    options: WriteOptions & { ttl?: number } = {},
  ): Promise<number> {
    const spec: UpdateSpec = { add: { [attr]: delta } };
    if (options.ttl !== undefined) spec.set = { ttl: options.ttl };
    const next = await this.update(key, spec, options);
    return next[attr] as number;
  }

  async query(spec: QuerySpec): Promise<QueryPage> {
    this.commits.beforeRead();
    const limit = Math.min(Math.max(spec.limit ?? 100, 1), 1000);
    const [pkCol, skCol] = spec.index ? [`${spec.index}pk`, `${spec.index}sk`] : ['pk', 'sk'];
    const where: string[] = [`${pkCol} = ?`, '(ttl IS NULL OR ttl > ?)'];
    const params: (string | number)[] = [spec.pk, this.nowSeconds()];
    const sk = spec.sk;
    if (sk && 'beginsWith' in sk) {
      // Prefix match on UTF-8 bytes, as DynamoDB does: [prefix, the prefix's successor).
      const upper = prefixSuccessor(sk.beginsWith);
      where.push(upper === undefined ? `${skCol} >= ?` : `${skCol} >= ? AND ${skCol} < ?`);
      params.push(sk.beginsWith, ...(upper === undefined ? [] : [upper]));
    } else if (sk && 'between' in sk) {
      where.push(`${skCol} BETWEEN ? AND ?`);
      params.push(sk.between[0], sk.between[1]);
    } else if (sk && 'gt' in sk) {
      where.push(`${skCol} > ?`);
      params.push(sk.gt);
    } else if (sk && 'lt' in sk) {
      where.push(`${skCol} < ?`);
      params.push(sk.lt);
    }
    const dir = spec.reverse ? 'DESC' : 'ASC';
    const cmp = spec.reverse ? '<' : '>';
    if (spec.cursor) {
      const c = decodeCursor(spec.cursor);
      if (spec.index) {
        where.push(`(${skCol}, pk, sk) ${cmp} (?, ?, ?)`);
        params.push(c.isk ?? '', c.pk, c.sk);
      } else {
        where.push(`sk ${cmp} ?`);
        params.push(c.sk);
      }
    }
    const order = spec.index ? `${skCol} ${dir}, pk ${dir}, sk ${dir}` : `sk ${dir}`;
    const sql = `SELECT body FROM items WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${limit + 1}`;
    const rows = this.stmt(sql).all(...params) as Row[];
    // Within a request's window, a commit these rows may hold (made since the window's last look)
    // empties the cache of rows older than them.
    if (this.inRequestWindow()) this.cache.sync();
    const items = rows.slice(0, limit).map((r) => JSON.parse(r.body) as Item);
    const last = items.at(-1);
    const more = rows.length > limit && last !== undefined;
    return {
      items,
      cursor: more
        ? encodeCursor({
            pk: last.pk,
            sk: last.sk,
            isk: spec.index ? String(last[`${spec.index}sk`]) : undefined,
          })
        : undefined,
    };
  }

  async transactWrite(ops: TransactOp[]): Promise<void> {
    validateTransaction(ops);
    return this.commits.run(() => {
      // Only a condition or an update needs the item as it is: an unconditional put or delete (a
      // call's record and log line, new keys) would cost a SELECT of a row that is not there.
      const currents = ops.map((op) =>
        op.condition !== undefined || 'update' in op ? this.readForWrite(opKey(op)) : undefined,
      );
      const codes = ops.map((op, i) =>
        evaluateCondition(op.condition, currents[i]) ? 'None' : 'ConditionalCheckFailed',
      );
      if (codes.some((c) => c !== 'None'))
        throw new TransactionCanceledError(
          codes,
          ops.map((op) => op.name),
        );
      ops.forEach((op, i) => {
        if ('put' in op) this.upsert(op.put, currents[i], op.condition !== undefined);
        else if ('update' in op) this.upsert(applyUpdate(op.update, currents[i], op.spec), currents[i]);
        else if ('delete' in op) this.remove(op.delete);
      });
    });
  }

  async writeEach(ops: TransactOp[]): Promise<string | undefined> {
    validateEach(ops);
    return this.commits.run(() => {
      for (const op of ops) {
        const current =
          op.condition !== undefined || 'update' in op ? this.readForWrite(opKey(op)) : undefined;
        if (!evaluateCondition(op.condition, current)) return op.name ?? '';
        if ('put' in op) this.upsert(op.put, current, op.condition !== undefined);
        else if ('update' in op) this.upsert(applyUpdate(op.update, current, op.spec), current);
        else if ('delete' in op) this.remove(op.delete);
      }
      return undefined;
    });
  }

  /**
   * `PRAGMA data_version` costs a read transaction (four file-lock system calls), about 10 µs, and
   * a prompt call made eight reads: looking once per request instead saves most of that. The
   * window closes when `fn` settles, so work a request leaves running reads as before.
   */
  async asOneRequest<T>(fn: () => Promise<T>): Promise<T> {
    this.cache.sync();
    const window = { until: performance.now() + REQUEST_READ_WINDOW_MS };
    try {
      return await this.request.run(window, fn);
    } finally {
      window.until = 0;
    }
  }

  answeredBeforeCommit(): () => void {
    return this.commits.answeredBeforeCommit();
  }

  async close(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.commits.flush(); // nothing acknowledged-to-be is dropped
    this.cache.clear(); // a read after close fails, as on the database, rather than answer from memory
    // Its connection closes first, so the main one, the last, checkpoints and removes the WAL.
    await this.checkpointer.close();
    if (this.db.isOpen) this.db.close();
  }

  /** Deletes expired rows; reads already ignore them, this only reclaims space. */
  sweepExpired(): number {
    const result = this.stmt('DELETE FROM items WHERE ttl IS NOT NULL AND ttl <= ?').run(this.nowSeconds());
    return Number(result.changes);
  }

  private stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * A point read, through the row cache (sqlite-row-cache.ts); an expired item counts as absent.
   * Inside a write transaction the cache is already in sync (SqliteGroupCommit syncs it) and is not filled.
   */
  private read(key: ItemKey, inTransaction = false, shared = false): Item | undefined {
    // Outside a transaction, other connections' commits are looked for before the cache is used:
    // before every read, or, within a request's window (asOneRequest), as the request started and
    // then after each read the cache cannot answer (below).
    const windowed = !inTransaction && this.inRequestWindow();
    if (!inTransaction && !windowed) this.cache.sync();
    let row = this.cache.lookup(key);
    if (row === undefined) {
      const found = this.stmt('SELECT body, ttl FROM items WHERE pk = ? AND sk = ?').get(key.pk, key.sk) as
        | RowWithTtl
        | undefined;
      row = found ? { body: found.body, ttl: found.ttl } : null;
      // Within a window the look comes after the database read, so a request never sees a newer
      // row from the database and then an older one from the cache: a commit made since the last
      // look (before this read or during it) empties the cache, and this row, which may be older
      // than that commit, is not kept.
      if (windowed ? !this.cache.sync() : !inTransaction) this.cache.remember(key, row);
    }
    if (row === null || (row.ttl !== null && row.ttl <= this.nowSeconds())) return undefined;
    if (!shared) return JSON.parse(row.body) as Item;
    // A reader that never changes the item is given the one the row's last shared read parsed.
    if (row.shared) return row.shared;
    const item = deepFreeze(JSON.parse(row.body) as Item);
    this.cache.share(key, row, item);
    return item;
  }

  private inRequestWindow(): boolean {
    const window = this.request.getStore();
    return window !== undefined && performance.now() < window.until;
  }

  /** Inside a write transaction: an expired item counts as absent. */
  private readForWrite(key: ItemKey): Item | undefined {
    return this.read(key, true);
  }

  private check(key: ItemKey, condition: Condition | undefined): Item | undefined {
    const current = this.readForWrite(key);
    if (!evaluateCondition(condition, current)) throw new ConditionFailedError();
    return current;
  }

  /**
   * Writes `item` whole. `current`, when the write read it (a condition, an update), is the item as
   * stored: if the index columns and the expiry stay as they are, only the body is rewritten, and
   * if only the expiry changes (a concurrency slot taken or released), the body and the expiry.
   * SQLite rewrites the entries of every index whose columns an UPDATE assigns, even to the same
   * value, so the upsert would also write a page of the ttl index for a counter whose expiry did
   * not change, and it tries the insert (a look in the key index) before its update.
   *
   * `keep` false (a put without a condition, a blind write: a call's record and log lines) leaves
   * the row out of the row cache: a call's record and log lines are never read back by key (other
   * blind writes, such as a run credential, at most once), yet under load they were most of what
   * it held, every call's log line with its trace kept for the collector to mark
   * (docs/performance.md, item 17).
   */
  private upsert(item: Item, current: Item | undefined, keep = true): void {
    // JSON.stringify leaves out attributes whose value is undefined: they are not stored.
    const body = JSON.stringify(item);
    const columns = indexColumns(item);
    const row: CachedRow = { body, ttl: columns[4] };
    const kept = current !== undefined ? keptColumns(columns, indexColumns(current)) : 'none';
    if (kept !== 'none') {
      const { changes } =
        kept === 'all'
          ? this.stmt('UPDATE items SET body = ? WHERE pk = ? AND sk = ?').run(body, item.pk, item.sk)
          : this.stmt('UPDATE items SET ttl = ?, body = ? WHERE pk = ? AND sk = ?').run(
              columns[4],
              body,
              item.pk,
              item.sk,
            );
      if (changes === 1) {
        this.commits.changed();
        if (keep) this.cache.written(item, row);
        else this.cache.writtenUnkept(item);
        return;
      }
    }
    this.stmt(
      `INSERT INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pk, sk) DO UPDATE SET gsi1pk = excluded.gsi1pk, gsi1sk = excluded.gsi1sk,
         gsi2pk = excluded.gsi2pk, gsi2sk = excluded.gsi2sk, ttl = excluded.ttl, body = excluded.body`,
    ).run(item.pk, item.sk, ...columns, body);
    this.commits.changed();
    if (keep) this.cache.written(item, row);
    else this.cache.writtenUnkept(item);
  }

  private remove(key: ItemKey): void {
    this.stmt('DELETE FROM items WHERE pk = ? AND sk = ?').run(key.pk, key.sk);
    this.commits.changed();
    this.cache.written(key, null);
  }
}

/**
 * The least string above every string that starts with `prefix`, in UTF-8 byte (= code point)
 * order: the last code point incremented. (`prefix + U+FFFF` is not one: it misses keys whose
 * next character is U+FFFF or above U+FFFF, e.g. an emoji, which sort after it in UTF-8.)
 */
function prefixSuccessor(prefix: string): string | undefined {
  const codePoints = Array.from(prefix, (c) => c.codePointAt(0) as number);
  while (codePoints.length > 0) {
    const last = codePoints.pop() as number;
    if (last < 0x10ffff) return String.fromCodePoint(...codePoints, last === 0xd7ff ? 0xe000 : last + 1);
  }
  return undefined;
}

function opKey(op: TransactOp): ItemKey {
  if ('put' in op) return { pk: op.put.pk, sk: op.put.sk };
  if ('update' in op) return op.update;
  if ('delete' in op) return op.delete;
  return op.check;
}

function applyUpdate(key: ItemKey, current: Item | undefined, spec: UpdateSpec): Item {
  const next: Item = { ...(current ?? {}), pk: key.pk, sk: key.sk };
  for (const [attr, value] of Object.entries(spec.set ?? {})) {
    if (attr === 'pk' || attr === 'sk') throw new Error('An update cannot change the item key');
    next[attr] = value;
  }
  for (const attr of spec.remove ?? []) delete next[attr];
  for (const [attr, delta] of Object.entries(spec.add ?? {})) {
    const before = next[attr] ?? 0;
    if (typeof before !== 'number') throw new Error(`Cannot add to non-numeric attribute ${attr}`);
    next[attr] = before + delta;
  }
  return next;
}
