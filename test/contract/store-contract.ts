/**
 * What the Store contract's test files share (store-contract.test.ts,
 * store-contract-ttl-transactions.test.ts): the adapters it runs against, each suite's store on its
 * backend, and the helpers its cases use.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import type { Item, QuerySpec, Store } from '../../functions/ports/store.ts';
import {
  dynamoDbLocalBackend,
  faultyDynamoDbLocalBackend,
  type StoreBackend,
  sqliteBackend,
} from '../helpers/store-backends.ts';

/** Every adapter the contract runs against, by name. */
export const STORE_ADAPTERS: [string, () => Promise<StoreBackend>][] = [
  ['SqliteStore', sqliteBackend],
  ['DynamoDbStore on DynamoDB Local', dynamoDbLocalBackend],
  // DynamoDB Local never conflicts or throttles; the service does, and every answer must stay the same.
  ['DynamoDbStore on DynamoDB Local with faults', faultyDynamoDbLocalBackend],
];

/**
 * In a suite: its backend, started in a `before`, with `store` opened on it; `open` opens another
 * store on the same backend (with its own clock). Every store is closed, and the backend, `after`.
 */
export function storeOnBackend(start: () => Promise<StoreBackend>): {
  readonly store: Store;
  open: (nowSeconds?: () => number) => Store;
} {
  let backend: StoreBackend;
  let store: Store | undefined;
  const opened: Store[] = [];
  const open = (nowSeconds?: () => number): Store => {
    const s = backend.open(nowSeconds);
    opened.push(s);
    return s;
  };
  before(async () => {
    backend = await start();
    store = open();
  });
  after(async () => {
    for (const s of opened) await s.close();
    await backend.close();
  });
  return {
    get store() {
      assert.ok(store, 'the store opens in the suite’s before');
      return store;
    },
    open,
  };
}

/** A fresh partition key per test, so tests on the shared backend never see each other's items. */
export function partition(label: string): string {
  return `${label}#${randomUUID()}`;
}

export function sks(items: Item[]): string[] {
  return items.map((item) => item.sk);
}

export async function allPages(
  store: Store,
  spec: Omit<QuerySpec, 'cursor'>,
): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.query({ ...spec, cursor });
    items.push(...page.items);
    cursor = page.cursor;
    pages++;
    assert.ok(pages < 500, 'paging terminates');
  } while (cursor);
  return { items, pages };
}

export function rejectsWith<T extends Error>(type: new (...args: never[]) => T) {
  return (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    return true;
  };
}
