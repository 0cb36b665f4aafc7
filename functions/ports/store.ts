/**
 * The Store port: a DynamoDB-shaped item store. Both adapters (SQLite, DynamoDB) implement
 * exactly this surface, and one contract suite (test/contract/store-contract.test.ts) holds them to it.
 *
 * Items are JSON-serialisable records addressed by `pk` + `sk`. Up to two global secondary
 * indexes are projected from the attributes `gsi1pk/gsi1sk` and `gsi2pk/gsi2sk`. An item whose
 * numeric `ttl` (epoch seconds) is in the past is treated as absent by every read, whatever the
 * backend's own expiry sweep has done so far.
 */

import { PlatformError } from '../shared/errors.ts';

export type Scalar = string | number | boolean | null;
export type AttrValue = Scalar | AttrValue[] | { [key: string]: AttrValue };

export interface ItemKey {
  pk: string;
  sk: string;
}

export type Item = ItemKey & { [attr: string]: AttrValue | undefined };

export type IndexName = 'gsi1' | 'gsi2';

/** A typed condition tree; adapters translate it (DynamoDB expression / evaluation in a transaction). */
export type Condition =
  | { op: 'exists' }
  | { op: 'notExists' }
  | { op: 'attrExists'; attr: string }
  | { op: 'attrNotExists'; attr: string }
  | { op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; attr: string; value: Scalar }
  | { op: 'and' | 'or'; conditions: Condition[] }
  | { op: 'not'; condition: Condition };

/** Builders, so callers never spell condition objects by hand. */
export const cond = {
  /** The item exists. */
  exists: (): Condition => ({ op: 'exists' }),
  /** No item with this key exists (a create). */
  notExists: (): Condition => ({ op: 'notExists' }),
  attrExists: (attr: string): Condition => ({ op: 'attrExists', attr }),
  attrNotExists: (attr: string): Condition => ({ op: 'attrNotExists', attr }),
  eq: (attr: string, value: Scalar): Condition => ({ op: 'eq', attr, value }),
  ne: (attr: string, value: Scalar): Condition => ({ op: 'ne', attr, value }),
  lt: (attr: string, value: Scalar): Condition => ({ op: 'lt', attr, value }),
  lte: (attr: string, value: Scalar): Condition => ({ op: 'lte', attr, value }),
  gt: (attr: string, value: Scalar): Condition => ({ op: 'gt', attr, value }),
  gte: (attr: string, value: Scalar): Condition => ({ op: 'gte', attr, value }),
  and: (...conditions: Condition[]): Condition => ({ op: 'and', conditions }),
  or: (...conditions: Condition[]): Condition => ({ op: 'or', conditions }),
  not: (condition: Condition): Condition => ({ op: 'not', condition }),
};

/**
 * An update: `set` replaces attributes, `remove` deletes them, `add` atomically adds to numeric
 * attributes (a missing attribute counts as 0). An update of a missing item creates it, as in
 * DynamoDB; guard with `cond.exists()` where that is wrong.
 */
export interface UpdateSpec {
  set?: Record<string, AttrValue>;
  remove?: string[];
  add?: Record<string, number>;
}

export interface WriteOptions {
  condition?: Condition;
}

export interface QuerySpec {
  /** Query the base table (omit) or a GSI. */
  index?: IndexName;
  /** The partition key value: `pk` for the table, `gsiNpk` for an index. */
  pk: string;
  /** Sort key restriction. */
  sk?: { beginsWith: string } | { between: [string, string] } | { gt: string } | { lt: string };
  /** Page size; the adapter may return fewer. Default 100, at most 1000. */
  limit?: number;
  /** Opaque cursor returned by a previous page. */
  cursor?: string;
  /** Descending sort-key order. */
  reverse?: boolean;
}

export interface QueryPage {
  items: Item[];
  /** Present when more items may follow. */
  cursor?: string;
}

/**
 * One operation of a transaction. `name` labels it for the caller: when the transaction is
 * cancelled, the error says which named operations failed (`TransactionCanceledError.failed`), so
 * callers match names, never positions.
 */
export type TransactOp = { name?: string } & (
  | { put: Item; condition?: Condition }
  | { update: ItemKey; spec: UpdateSpec; condition?: Condition }
  | { delete: ItemKey; condition?: Condition }
  | { check: ItemKey; condition: Condition }
);

/** The most operations one transaction holds (DynamoDB's TransactWriteItems). */
export const MAX_TRANSACTION_OPS = 100;

/** How a point read's item may be handed over. */
export interface ReadOptions {
  /**
   * The caller only reads the item (or copies it) and never changes it: the store may hand it the
   * same frozen object it handed earlier readers of the key as it is, not one parsed anew for each
   * (the embedded store's row cache keeps it: a call reads its API key, account, membership and
   * agent version, the same as the call before). Another store hands over its own copy as ever.
   */
  shared?: boolean;
}

/** A shared read's options (one object for every such read). */
export const SHARED: ReadOptions = Object.freeze({ shared: true });

export interface Store {
  get(key: ItemKey, options?: ReadOptions): Promise<Item | undefined>;
  put(item: Item, options?: WriteOptions): Promise<void>;
  /** Returns the item as it is after the update. */
  update(key: ItemKey, spec: UpdateSpec, options?: WriteOptions): Promise<Item>;
  /** Returns the item as it was, or undefined when there was none. */
  delete(key: ItemKey, options?: WriteOptions): Promise<Item | undefined>;
  /** Atomically adds `delta` to a numeric attribute and returns the new value. */
  atomicAdd(
    key: ItemKey,
    attr: string,
    delta: number,
    options?: WriteOptions & { ttl?: number },
  ): Promise<number>;
  query(spec: QuerySpec): Promise<QueryPage>;
  /** All-or-nothing write of up to 100 operations on distinct keys. */
  transactWrite(ops: TransactOp[]): Promise<void>;
  /**
   * Writes up to 100 operations on distinct keys in order, each on its own (not all-or-nothing):
   * stops at the first whose condition does not hold and answers its name ('' when unnamed), the
   * ops before it written and it and those after not; undefined when every op was written. No
   * `check` ops. Cheaper than transactWrite where a transaction costs more than its writes
   * (DynamoDB bills every item of one twice: here one request each); the SQLite store writes them
   * in one commit.
   */
  writeEach(ops: TransactOp[]): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Thrown when a write's condition does not hold. Nothing was written. */
export class ConditionFailedError extends Error {
  override name = 'ConditionFailedError';
  constructor(message = 'The conditional request failed') {
    super(message);
  }
}

/**
 * Thrown when a transaction is cancelled because a condition did not hold. Nothing was written.
 * Callers ask by the ops' names: `conditionFailed` (`failed` holds each failed named op's code:
 * 'ConditionalCheckFailed' when its condition did not hold; beside it, on DynamoDB, another op of
 * the same transaction may show 'TransactionConflict'). A transaction cancelled only by conflicts
 * or throttling is never this error: the adapter retries it, and past its budget throws
 * `StoreBusyError` (docs/data-model.md, "Transient failures"). An adapter builds it from its code
 * per op ('None' for an op that passed) and the ops' names; unnamed ops appear only in the message.
 */
export class TransactionCanceledError extends Error {
  override name = 'TransactionCanceledError';
  /** The code of each named op that did not pass ('None' ones left out). */
  readonly failed: Readonly<Record<string, string>>;
  constructor(codes: string[], names: (string | undefined)[] = []) {
    const failed: Record<string, string> = {};
    codes.forEach((code, i) => {
      const name = names[i];
      if (name !== undefined && code !== 'None') failed[name] = code;
    });
    const labels = codes.map((code, i) => (names[i] === undefined ? code : `${names[i]}: ${code}`));
    super(`Transaction cancelled: [${labels.join(', ')}]`);
    this.failed = failed;
  }

  /** The op named `name` was cancelled because its condition did not hold. */
  conditionFailed(name: string): boolean {
    return this.failed[name] === 'ConditionalCheckFailed';
  }

  /**
   * The same as `conditionFailed`: only a failed condition cancels an op as far as callers are
   * concerned. A conflicting write is not an answer about the op (a quota counter that conflicted
   * is not used up), so it never reaches them as one.
   */
  cancelledBy(name: string): boolean {
    return this.conditionFailed(name);
  }
}

/** Seconds a client is told to wait after `StoreBusyError`. */
export const STORE_BUSY_WAIT_SECONDS = 1;

/**
 * Thrown when the store kept refusing a request for contention (a conflicting transaction) or
 * throughput (throttling) past the adapter's retry budget, a few seconds. Nothing was written and
 * no condition was judged, so it is a retryable 503 with Retry-After, never a failed condition
 * (a call does not hold its slot and its Lambda through a throttling episode).
 */
export class StoreBusyError extends PlatformError {
  override name = 'StoreBusyError';
  constructor(cause?: unknown) {
    super(
      'SERVICE_UNAVAILABLE',
      'The data store is busy (conflicting writes or throttling); nothing was changed, retry in a moment',
      { suggested_wait_time: STORE_BUSY_WAIT_SECONDS, cause: 'store_busy' },
    );
    this.cause = cause;
  }
}

/** Thrown for a cursor the store did not issue (a client error: the caller maps it to 400). */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
  constructor() {
    super('The cursor is not one this store issued');
  }
}

/** Reads every page of a query into memory (callers that page for a client use `query` and its cursor). */
export async function queryAll(store: Store, spec: Omit<QuerySpec, 'cursor'>): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...spec, cursor, limit: spec.limit ?? 1000 });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

/** True when an item has expired by its `ttl` attribute (epoch seconds). */
export function isExpired(item: Item, nowSeconds: number): boolean {
  return typeof item.ttl === 'number' && item.ttl <= nowSeconds;
}
