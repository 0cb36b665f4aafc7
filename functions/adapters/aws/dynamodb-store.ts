import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  type Condition,
  ConditionFailedError,
  type Item,
  type ItemKey,
  isExpired,
  type QueryPage,
  type QuerySpec,
  type Store,
  TransactionCanceledError,
  type TransactOp,
  type UpdateSpec,
  type WriteOptions,
} from '../../ports/store.ts';
import { evaluateCondition, validateEach, validateTransaction } from '../store-semantics.ts';
import { askConsumedCapacity } from './dynamodb-consumed-capacity.ts';
import {
  checkUpdate,
  Expr,
  expiredCondition,
  liveCondition,
  ttlAwareCondition,
  updateExpression,
} from './dynamodb-expressions.ts';
import { decodeCursor, skRange } from './dynamodb-query-range.ts';
import { compact, freshItem, itemKey, transactItem } from './dynamodb-requests.ts';
import { INDEXES, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE } from './dynamodb-table.ts';
import {
  Backoff,
  DEFAULT_RETRY_POLICY,
  isTransientError,
  onlyTransientReasons,
  type RetryPolicy,
  retryTransient,
} from './dynamodb-transient-retry.ts';

export interface DynamoDbStoreOptions {
  tableName: string;
  /** Defaults to `new DynamoDBClient({})`, which `close()` then destroys. A given client is left open. */
  client?: DynamoDBClient;
  /** Epoch seconds; injectable so tests can move the TTL clock. */
  nowSeconds?: () => number;
  /** How transaction conflicts and throttling are retried (DEFAULT_RETRY_POLICY by default). */
  retry?: Partial<RetryPolicy>;
}

/** How often a write retries when an expired (not yet swept) item changed under it. */
const MAX_ATTEMPTS = 4;

/**
 * The Store on one DynamoDB table (see `tableDefinition`), through the DocumentClient.
 *
 * TTL: DynamoDB deletes expired items lazily (up to days later), so this adapter makes an item
 * whose `ttl` <= now absent itself: `get` drops it, `query` filters it out, and every condition
 * is evaluated as if an expired item were not there (see `ttlAwareCondition`). An update of an
 * expired item must not merge into its stale attributes, so updates are guarded with "not
 * expired" and, when that guard is what failed, the expired item is replaced by a fresh one.
 */
export class DynamoDbStore implements Store {
  private readonly tableName: string;
  private readonly client: DynamoDBClient;
  private readonly ownsClient: boolean;
  private readonly doc: DynamoDBDocumentClient;
  private readonly nowSeconds: () => number;
  private readonly retry: RetryPolicy;

  constructor(options: DynamoDbStoreOptions) {
    this.tableName = options.tableName;
    this.ownsClient = options.client === undefined;
    this.client = options.client ?? new DynamoDBClient({});
    askConsumedCapacity(this.client);
    this.doc = DynamoDBDocumentClient.from(this.client, { marshallOptions: { removeUndefinedValues: true } });
    this.nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  async get(key: ItemKey): Promise<Item | undefined> {
    const item = await this.rawGet(key);
    return item && !isExpired(item, this.nowSeconds()) ? item : undefined;
  }

  async put(item: Item, options: WriteOptions = {}): Promise<void> {
    await this.conditional(() => {
      const x = new Expr();
      const condition = options.condition && ttlAwareCondition(options.condition, x, this.nowSeconds());
      return this.doc.send(
        new PutCommand(
          compact({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: condition,
            ...x.attributes(),
          }),
        ),
      );
    });
  }

  async update(key: ItemKey, spec: UpdateSpec, options: WriteOptions = {}): Promise<Item> {
    checkUpdate(spec);
    for (let attempt = 1; ; attempt++) {
      let now = this.nowSeconds();
      try {
        const out = await this.retrying(() => {
          now = this.nowSeconds();
          const x = new Expr();
          const update = updateExpression(spec, x);
          return this.doc.send(
            new UpdateCommand(
              compact({
                TableName: this.tableName,
                Key: itemKey(key),
                UpdateExpression: update,
                ConditionExpression: liveCondition(options.condition, x, now),
                ReturnValues: 'ALL_NEW',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                ...x.attributes(),
              }),
            ),
          );
        });
        return out.Attributes as Item;
      } catch (err) {
        if (!isError(err, 'ConditionalCheckFailedException')) throw err;
        const found = await this.whyUpdateFailed(key, err, options.condition, now);
        if (found === 'failed' || attempt >= MAX_ATTEMPTS) throw new ConditionFailedError();
        if (found === 'expired') {
          if (!evaluateCondition(options.condition, undefined)) throw new ConditionFailedError();
          const fresh = freshItem(key, spec);
          if (await this.replaceExpired(fresh, now)) return fresh;
        }
        // Otherwise the item changed between the update and our look at it: try again.
      }
    }
  }

  async delete(key: ItemKey, options: WriteOptions = {}): Promise<Item | undefined> {
    let now = this.nowSeconds();
    const out = await this.conditional(() => {
      now = this.nowSeconds();
      const x = new Expr();
      const condition = options.condition && ttlAwareCondition(options.condition, x, now);
      return this.doc.send(
        new DeleteCommand(
          compact({
            TableName: this.tableName,
            Key: itemKey(key),
            ConditionExpression: condition,
            ReturnValues: 'ALL_OLD',
            ...x.attributes(),
          }),
        ),
      );
    });
    const old = out.Attributes as Item | undefined;
    return old && !isExpired(old, now) ? old : undefined;
  }

  async atomicAdd(
    key: ItemKey,
    attr: string,
    delta: number,
    options: WriteOptions & { ttl?: number } = {},
  ): Promise<number> {
    const spec: UpdateSpec = { add: { [attr]: delta } };
    if (options.ttl !== undefined) spec.set = { [TTL_ATTRIBUTE]: options.ttl };
    const next = await this.update(key, spec, { condition: options.condition });
    return next[attr] as number;
  }

  async query(spec: QuerySpec): Promise<QueryPage> {
    const limit = Math.min(Math.max(spec.limit ?? 100, 1), 1000);
    const [pkAttr, skAttr] = spec.index
      ? [INDEXES[spec.index].partitionKey, INDEXES[spec.index].sortKey]
      : [PARTITION_KEY, SORT_KEY];
    const startKey = spec.cursor === undefined ? undefined : decodeCursor(spec.cursor, spec, pkAttr, skAttr);
    const x = new Expr();
    const keyConditions = [`${x.name(pkAttr)} = ${x.value(spec.pk)}`];
    const sk = skRange(spec.sk);
    if (sk === 'empty') return { items: [] };
    if (sk) keyConditions.push(sk(x.name(skAttr), (v) => x.value(v)));
    const now = this.nowSeconds();
    const out = await this.retrying(() =>
      this.doc.send(
        new QueryCommand(
          compact({
            TableName: this.tableName,
            IndexName: spec.index,
            KeyConditionExpression: keyConditions.join(' AND '),
            FilterExpression: `NOT (${expiredCondition(x, now)})`,
            // Global secondary indexes only support eventually consistent reads.
            ConsistentRead: spec.index ? undefined : true,
            Limit: limit,
            ScanIndexForward: !spec.reverse,
            ExclusiveStartKey: startKey,
            ...x.attributes(),
          }),
        ),
      ),
    );
    const last = out.LastEvaluatedKey;
    return {
      items: (out.Items ?? []) as Item[],
      cursor: last ? Buffer.from(JSON.stringify(last)).toString('base64url') : undefined,
    };
  }

  /** One request an op, in order (each retried as put, update and delete are). */
  async writeEach(ops: TransactOp[]): Promise<string | undefined> {
    validateEach(ops);
    for (const op of ops) {
      try {
        const options = { condition: op.condition };
        if ('put' in op) await this.put(op.put, options);
        else if ('update' in op) await this.update(op.update, op.spec, options);
        else if ('delete' in op) await this.delete(op.delete, options);
      } catch (err) {
        if (err instanceof ConditionFailedError) return op.name ?? '';
        throw err;
      }
    }
    return undefined;
  }

  /**
   * Retries, within the retry budget, a transaction cancelled only by conflicts or throttling (a
   * fresh ClientRequestToken each time: the cancelled one wrote nothing, and its conditions are
   * rebuilt at the new time); a failed condition is the caller's answer, at once.
   */
  async transactWrite(ops: TransactOp[]): Promise<void> {
    validateTransaction(ops);
    // Indexes of update ops whose target turned out to be an expired item: sent as replacing puts.
    let replace = new Set<number>();
    const backoff = new Backoff(this.retry);
    for (let expiryRetries = 0; ; ) {
      const now = this.nowSeconds();
      try {
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: ops.map((op, i) => transactItem(this.tableName, op, now, replace.has(i))),
          }),
        );
        return;
      } catch (err) {
        if (!isError(err, 'TransactionCanceledException')) {
          if (!isTransientError(err)) throw err;
          await backoff.waitOrGiveUp(err);
          continue;
        }
        const cancellations =
          (err as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
        const codes = cancellations.map((r) => r.Code ?? 'None');
        const expired = new Set<number>();
        const vanished = new Set<number>();
        codes.forEach((code, i) => {
          const op = ops[i];
          if (code !== 'ConditionalCheckFailed' || !op || !('update' in op)) return;
          if (replace.has(i)) vanished.add(i);
          else if (rawIsExpired(cancellations[i]?.Item, now) && evaluateCondition(op.condition, undefined)) {
            expired.add(i);
          }
        });
        // As the SQLite adapter sees it, an update of an expired item did not fail: it creates.
        const adjusted = codes.map((code, i) => (expired.has(i) || vanished.has(i) ? 'None' : code));
        const names = ops.map((op) => op.name);
        if (adjusted.includes('ConditionalCheckFailed')) throw new TransactionCanceledError(adjusted, names);
        replace = new Set([...replace].filter((i) => !vanished.has(i)).concat([...expired]));
        if (onlyTransientReasons(adjusted)) await backoff.waitOrGiveUp(err);
        else if (adjusted.some((code) => code !== 'None'))
          throw err; // ValidationError and the like: a bug
        else if (expired.size + vanished.size === 0 || ++expiryRetries >= MAX_ATTEMPTS)
          throw new TransactionCanceledError(adjusted, names);
        // Otherwise an expired item is replaced (or no longer is): send again at once.
      }
    }
  }

  async close(): Promise<void> {
    if (this.ownsClient) this.client.destroy();
  }

  /** The item as stored, expired or not. */
  private async rawGet(key: ItemKey): Promise<Item | undefined> {
    const out = await this.retrying(() =>
      this.doc.send(new GetCommand({ TableName: this.tableName, Key: itemKey(key), ConsistentRead: true })),
    );
    return out.Item as Item | undefined;
  }

  /**
   * After an update's condition (live item AND the caller's condition) failed: was the item
   * expired (replace it), did the caller's condition fail ('failed'), or did the item change
   * since ('retry')? DynamoDB returns the item with the error (ReturnValuesOnConditionCheckFailure);
   * without one (no item, or an emulator that ignores the parameter) we look.
   */
  private async whyUpdateFailed(
    key: ItemKey,
    err: unknown,
    condition: Condition | undefined,
    now: number,
  ): Promise<'expired' | 'failed' | 'retry'> {
    const returned = (err as { Item?: RawItem }).Item;
    if (returned) return rawIsExpired(returned, now) ? 'expired' : 'failed';
    const current = await this.rawGet(key);
    if (current && isExpired(current, now)) return 'expired';
    return evaluateCondition(condition, current) ? 'retry' : 'failed';
  }

  /** Overwrites an item that is still expired at `now`; false when it no longer is. */
  private async replaceExpired(item: Item, now: number): Promise<boolean> {
    const x = new Expr();
    try {
      await this.retrying(() =>
        this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: expiredCondition(x, now),
            ...x.attributes(),
          }),
        ),
      );
      return true;
    } catch (err) {
      if (isError(err, 'ConditionalCheckFailedException')) return false;
      throw err;
    }
  }

  /** Sends a request (built anew for each attempt), retrying transient refusals within the budget. */
  private retrying<T>(send: () => Promise<T>): Promise<T> {
    return retryTransient(this.retry, send);
  }

  /** A single-item write, retried as `retrying` does, with a failed condition mapped to the port's error. */
  private async conditional<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await this.retrying(write);
    } catch (err) {
      if (isError(err, 'ConditionalCheckFailedException')) throw new ConditionFailedError();
      throw err;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Keys, errors

/** An item in wire format, as errors carry it (the DocumentClient does not unmarshall errors). */
type RawItem = Record<string, { N?: string } | undefined>;

interface CancellationReason {
  Code?: string;
  Item?: RawItem;
}

function rawIsExpired(item: RawItem | undefined, now: number): boolean {
  const ttl = item?.[TTL_ATTRIBUTE]?.N;
  return ttl !== undefined && Number(ttl) <= now;
}

function isError(err: unknown, name: string): boolean {
  return err instanceof Error && err.name === name;
}
