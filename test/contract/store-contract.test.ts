/**
 * The Store contract: one suite, run against every adapter (SQLite on a temp file, DynamoDB on
 * DynamoDB Local, AWS's own engine, on a loopback port), transactions included. The DynamoDB
 * adapter's requests are also checked against the exact shape it builds, on a mocked client.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { evaluateCondition } from '../../functions/adapters/store-semantics.ts';
import {
  type Condition,
  ConditionFailedError,
  cond,
  InvalidCursorError,
  type Item,
  type QuerySpec,
  queryAll,
  type Store,
  TransactionCanceledError,
} from '../../functions/ports/store.ts';
import {
  dynamoDbLocalBackend,
  faultyDynamoDbLocalBackend,
  type StoreBackend,
  sqliteBackend,
} from '../helpers/store-backends.ts';

/** A fresh partition key per test, so tests on the shared backend never see each other's items. */
function partition(label: string): string {
  return `${label}#${randomUUID()}`;
}

function sks(items: Item[]): string[] {
  return items.map((item) => item.sk);
}

async function allPages(
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

function rejectsWith<T extends Error>(type: new (...args: never[]) => T) {
  return (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    return true;
  };
}

function storeContract(name: string, start: () => Promise<StoreBackend>): void {
  describe(`Store contract: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
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

    describe('items', () => {
      it('round-trips an item with nested objects, arrays, booleans, null and numbers', async () => {
        const pk = partition('roundtrip');
        const item: Item = {
          pk,
          sk: 'item',
          title: 'Héllo wörld 😀',
          count: 42,
          ratio: -0.125,
          big: 2 ** 40,
          zero: 0,
          done: false,
          flag: true,
          nothing: null,
          empty: '',
          tags: ['a', 'b', 'a'],
          mixed: [1, 'two', true, null, { three: 3 }, [4, [5]]],
          nested: { level: { deeper: { value: 'x', list: [] } }, none: null, emptyMap: {} },
          dropped: undefined,
        };
        await store.put(item);
        const { dropped: _, ...expected } = item;
        assert.deepEqual(await store.get({ pk, sk: 'item' }), expected);
      });

      it('put replaces the whole item; delete returns the old item, then undefined', async () => {
        const pk = partition('replace');
        const key = { pk, sk: 'item' };
        await store.put({ ...key, a: 1, b: 2 });
        await store.put({ ...key, c: 3 });
        assert.deepEqual(await store.get(key), { ...key, c: 3 });
        assert.deepEqual(await store.delete(key), { ...key, c: 3 });
        assert.equal(await store.get(key), undefined);
        assert.equal(await store.delete(key), undefined);
        assert.equal(await store.get({ pk, sk: 'never' }), undefined);
      });

      it('put with notExists creates once; the second put fails and changes nothing', async () => {
        const key = { pk: partition('create'), sk: 'item' };
        await store.put({ ...key, v: 1 }, { condition: cond.notExists() });
        await assert.rejects(
          store.put({ ...key, v: 2, extra: true }, { condition: cond.notExists() }),
          rejectsWith(ConditionFailedError),
        );
        assert.deepEqual(await store.get(key), { ...key, v: 1 });
      });
    });

    describe('conditions', () => {
      const subject = { n: 5, s: 'm', b: true, z: null, list: [1], map: { a: 1 } };
      // [description, condition, holds on `subject`]
      const onItem: [string, Condition, boolean][] = [
        ['exists', cond.exists(), true],
        ['notExists', cond.notExists(), false],
        ['eq number', cond.eq('n', 5), true],
        ['eq number, other value', cond.eq('n', 6), false],
        ['eq, other type', cond.eq('n', '5'), false],
        ['eq string', cond.eq('s', 'm'), true],
        ['eq boolean', cond.eq('b', true), true],
        ['eq null', cond.eq('z', null), true],
        ['eq on a missing attribute', cond.eq('missing', 1), false],
        ['ne, equal value', cond.ne('n', 5), false],
        ['ne, other value', cond.ne('n', 6), true],
        ['ne, other type', cond.ne('s', 5), true],
        ['ne on a missing attribute', cond.ne('missing', 1), true],
        ['ne on a map attribute', cond.ne('map', 1), true],
        ['ne boolean', cond.ne('b', false), true],
        ['lt', cond.lt('n', 6), true],
        ['lt, equal', cond.lt('n', 5), false],
        ['lte, equal', cond.lte('n', 5), true],
        ['gt', cond.gt('n', 4), true],
        ['gt, equal', cond.gt('n', 5), false],
        ['gte, equal', cond.gte('n', 5), true],
        ['gte, above', cond.gte('n', 6), false],
        ['lt string', cond.lt('s', 'n'), true],
        ['gt string', cond.gt('s', 'n'), false],
        ['lt, other type', cond.lt('s', 100), false],
        ['lt on a missing attribute', cond.lt('missing', 100), false],
        ['attrExists', cond.attrExists('n'), true],
        ['attrExists on a null attribute', cond.attrExists('z'), true],
        ['attrExists on a missing attribute', cond.attrExists('missing'), false],
        ['attrNotExists', cond.attrNotExists('missing'), true],
        ['attrNotExists on a present attribute', cond.attrNotExists('n'), false],
        ['and, both hold', cond.and(cond.eq('n', 5), cond.attrExists('s')), true],
        ['and, one fails', cond.and(cond.eq('n', 5), cond.eq('s', 'x')), false],
        ['or, one holds', cond.or(cond.eq('n', 6), cond.eq('s', 'm')), true],
        ['or, none holds', cond.or(cond.eq('n', 6), cond.eq('s', 'x')), false],
        ['not', cond.not(cond.eq('n', 5)), false],
        ['not of a failing condition', cond.not(cond.attrExists('missing')), true],
        ['not not', cond.not(cond.not(cond.exists())), true],
        [
          'nested',
          cond.and(cond.or(cond.lt('n', 0), cond.gte('n', 5)), cond.not(cond.or(cond.eq('b', false)))),
          true,
        ],
        ['empty and', cond.and(), true],
        ['empty or', cond.or(), false],
        ['single and', cond.and(cond.eq('n', 6)), false],
        ['and with an empty or', cond.and(cond.exists(), cond.or()), false],
      ];
      // [description, condition, holds when there is no item]
      const onMissing: [string, Condition, boolean][] = [
        ['exists', cond.exists(), false],
        ['notExists', cond.notExists(), true],
        ['attrExists', cond.attrExists('n'), false],
        ['attrNotExists', cond.attrNotExists('n'), true],
        ['eq', cond.eq('n', 5), false],
        ['ne', cond.ne('n', 5), true],
        ['lt', cond.lt('n', 6), false],
        ['not exists', cond.not(cond.exists()), true],
        ['or', cond.or(cond.exists(), cond.ne('s', 'x')), true],
        ['and', cond.and(cond.notExists(), cond.eq('n', 5)), false],
      ];

      it('the expectations agree with evaluateCondition (the SQLite adapter evaluates with it)', () => {
        const item: Item = { pk: 'p', sk: 's', ...subject };
        for (const [label, condition, holds] of onItem)
          assert.equal(evaluateCondition(condition, item), holds, label);
        for (const [label, condition, holds] of onMissing)
          assert.equal(evaluateCondition(condition, undefined), holds, label);
      });

      it('guards updates on an existing item', async () => {
        const pk = partition('cond-update');
        for (const [i, [label, condition, holds]] of onItem.entries()) {
          const key = { pk, sk: `case#${i}` };
          await store.put({ ...key, ...subject });
          const write = store.update(key, { set: { touched: true } }, { condition });
          if (holds) assert.deepEqual(await write, { ...key, ...subject, touched: true }, label);
          else {
            await assert.rejects(write, rejectsWith(ConditionFailedError), label);
            assert.deepEqual(await store.get(key), { ...key, ...subject }, `${label}: unchanged`);
          }
        }
      });

      it('guards deletes on an existing item', async () => {
        const pk = partition('cond-delete');
        for (const [i, [label, condition, holds]] of onItem.entries()) {
          const key = { pk, sk: `case#${i}` };
          await store.put({ ...key, ...subject });
          const write = store.delete(key, { condition });
          if (holds) {
            assert.deepEqual(await write, { ...key, ...subject }, label);
            assert.equal(await store.get(key), undefined, `${label}: deleted`);
          } else {
            await assert.rejects(write, rejectsWith(ConditionFailedError), label);
            assert.deepEqual(await store.get(key), { ...key, ...subject }, `${label}: kept`);
          }
        }
      });

      it('evaluates conditions on a missing item (an update that passes creates it)', async () => {
        const pk = partition('cond-missing');
        for (const [i, [label, condition, holds]] of onMissing.entries()) {
          const key = { pk, sk: `case#${i}` };
          const write = store.update(key, { set: { created: true } }, { condition });
          if (holds) assert.deepEqual(await write, { ...key, created: true }, label);
          else {
            await assert.rejects(write, rejectsWith(ConditionFailedError), label);
            assert.equal(await store.get(key), undefined, `${label}: not created`);
          }
          const remove = store.delete({ pk, sk: `absent#${i}` }, { condition });
          if (holds) assert.equal(await remove, undefined, `${label}: delete`);
          else await assert.rejects(remove, rejectsWith(ConditionFailedError), `${label}: delete`);
        }
      });

      it('ne on a missing attribute holds, as DynamoDB <> does (and on another type; not on an equal value)', async () => {
        const key = { pk: partition('ne'), sk: 'item' };
        await store.put({ ...key, status: 'open', n: 1 });
        await store.update(key, { set: { a: 1 } }, { condition: cond.ne('owner', 'alice') });
        await store.update(key, { set: { b: 1 } }, { condition: cond.ne('n', '1') });
        await assert.rejects(
          store.update(key, { set: { c: 1 } }, { condition: cond.ne('status', 'open') }),
          rejectsWith(ConditionFailedError),
        );
        assert.deepEqual(await store.get(key), { ...key, status: 'open', n: 1, a: 1, b: 1 });
      });
    });

    describe('update and atomicAdd', () => {
      it('takes attribute names literally: dots, dashes, spaces, reserved words', async () => {
        const key = { pk: partition('names'), sk: 'item' };
        const odd = { 'a.b': 1, 'x-y z': 'v', status: 'open', name: 'n', ttl_like: 2 };
        await store.put({ ...key, ...odd }, { condition: cond.attrNotExists('a.b') });
        const next = await store.update(
          key,
          { set: { 'x-y z': 'w' }, add: { 'a.b': 1 }, remove: ['name'] },
          { condition: cond.and(cond.eq('a.b', 1), cond.eq('status', 'open'), cond.attrExists('x-y z')) },
        );
        assert.deepEqual(next, { ...key, 'a.b': 2, 'x-y z': 'w', status: 'open', ttl_like: 2 });
        await assert.rejects(
          store.delete(key, { condition: cond.attrNotExists('a.b') }),
          rejectsWith(ConditionFailedError),
        );
      });

      it('update sets, removes and adds, and returns the new item', async () => {
        const key = { pk: partition('update'), sk: 'item' };
        await store.put({ ...key, a: 1, b: 'x', c: 10, keep: true });
        const next = await store.update(key, {
          set: { a: 2, nested: { x: [1, { y: null }] } },
          remove: ['b', 'absent'],
          add: { c: 5, fresh: 3 },
        });
        const expected = { ...key, a: 2, nested: { x: [1, { y: null }] }, c: 15, fresh: 3, keep: true };
        assert.deepEqual(next, expected);
        assert.deepEqual(await store.get(key), expected);
      });

      it('update of a missing item creates it; guarded by exists it fails and creates nothing', async () => {
        const pk = partition('upsert');
        assert.deepEqual(await store.update({ pk, sk: 'new' }, { set: { a: 'x' }, add: { n: 2 } }), {
          pk,
          sk: 'new',
          a: 'x',
          n: 2,
        });
        assert.deepEqual(await store.get({ pk, sk: 'new' }), { pk, sk: 'new', a: 'x', n: 2 });
        await assert.rejects(
          store.update({ pk, sk: 'guarded' }, { set: { a: 1 } }, { condition: cond.exists() }),
          rejectsWith(ConditionFailedError),
        );
        assert.equal(await store.get({ pk, sk: 'guarded' }), undefined);
      });

      it('update refuses to change the key', async () => {
        const key = { pk: partition('key'), sk: 'item' };
        await store.put({ ...key, a: 1 });
        await assert.rejects(store.update(key, { set: { pk: 'other' } }));
        assert.deepEqual(await store.get(key), { ...key, a: 1 });
      });

      it('atomicAdd adds to a missing or present counter, sets ttl, and honours a condition', async () => {
        const key = { pk: partition('counter'), sk: 'hits' };
        assert.equal(await store.atomicAdd(key, 'n', 5), 5);
        assert.equal(await store.atomicAdd(key, 'n', -2), 3);
        const ttl = Math.floor(Date.now() / 1000) + 3600;
        assert.equal(await store.atomicAdd(key, 'n', 1, { ttl }), 4);
        assert.deepEqual(await store.get(key), { ...key, n: 4, ttl });
        await assert.rejects(
          store.atomicAdd(key, 'n', 1, { condition: cond.lt('n', 4) }),
          rejectsWith(ConditionFailedError),
        );
        assert.equal(await store.atomicAdd(key, 'n', 1, { condition: cond.lt('n', 5) }), 5);
      });
    });

    describe('query', () => {
      const pk = partition('query');
      const other = partition('query-other');
      const g = partition('gsi');
      const tableSks = [
        ...Array.from({ length: 12 }, (_, i) => `a#${String(i + 1).padStart(2, '0')}`),
        ...Array.from({ length: 5 }, (_, i) => `b#${String(i + 1).padStart(2, '0')}`),
        'c',
      ];
      // Index items across two partitions, four of them per gsi1sk value: paging must not lose or repeat ties.
      const indexed: Item[] = [];

      before(async () => {
        for (const [i, sk] of tableSks.entries()) {
          const item: Item = { pk, sk, i };
          if (i % 2 === 0) Object.assign(item, { gsi1pk: g, gsi1sk: `g#${i % 3}` });
          await store.put(item);
          if (item.gsi1pk) indexed.push(item);
        }
        for (let i = 0; i < 9; i++) {
          const item: Item = { pk: other, sk: `o#${i}`, gsi1pk: g, gsi1sk: `g#${i % 3}` };
          await store.put(item);
          indexed.push(item);
        }
        // Not in the index: only half an index key.
        await store.put({ pk: other, sk: 'half', gsi1pk: g });
        // Expired: in neither listing.
        await store.put({ pk, sk: 'a#00', gsi1pk: g, gsi1sk: 'g#0', ttl: 1 });
      });

      it('lists a partition in sort key order, forward and reverse, without expired items', async () => {
        assert.deepEqual(sks((await store.query({ pk })).items), tableSks);
        assert.deepEqual(sks((await store.query({ pk, reverse: true })).items), [...tableSks].reverse());
        assert.deepEqual(sks(await queryAll(store, { pk })), tableSks);
      });

      it('restricts the sort key with beginsWith, between, gt and lt', async () => {
        const a = tableSks.filter((s) => s.startsWith('a#'));
        assert.deepEqual(sks((await store.query({ pk, sk: { beginsWith: 'a#' } })).items), a);
        assert.deepEqual(sks((await store.query({ pk, sk: { beginsWith: 'b#' }, reverse: true })).items), [
          'b#05',
          'b#04',
          'b#03',
          'b#02',
          'b#01',
        ]);
        assert.deepEqual(sks((await store.query({ pk, sk: { between: ['a#03', 'a#05'] } })).items), [
          'a#03',
          'a#04',
          'a#05',
        ]);
        assert.deepEqual(sks((await store.query({ pk, sk: { gt: 'a#10' } })).items), [
          'a#11',
          'a#12',
          'b#01',
          'b#02',
          'b#03',
          'b#04',
          'b#05',
          'c',
        ]);
        assert.deepEqual(sks((await store.query({ pk, sk: { lt: 'a#03' } })).items), ['a#01', 'a#02']);
        assert.deepEqual((await store.query({ pk, sk: { beginsWith: 'zzz' } })).items, []);
        assert.deepEqual((await store.query({ pk: partition('nothing') })).items, []);
      });

      it('beginsWith matches on UTF-8 bytes, including characters at and above U+FFFF', async () => {
        const p = partition('prefix');
        for (const sk of ['e"', 'e#a', 'e#\uffff', 'e#😀', 'e#😀x', 'e$']) await store.put({ pk: p, sk });
        assert.deepEqual(sks((await store.query({ pk: p, sk: { beginsWith: 'e#' } })).items), [
          'e#a',
          'e#\uffff',
          'e#😀',
          'e#😀x',
        ]);
        assert.deepEqual(sks((await store.query({ pk: p, sk: { beginsWith: 'e#😀' } })).items), [
          'e#😀',
          'e#😀x',
        ]);
      });

      it('pages through a partition with a cursor: every item once, in order', async () => {
        for (const reverse of [false, true]) {
          const { items, pages } = await allPages(store, { pk, limit: 5, reverse });
          assert.deepEqual(sks(items), reverse ? [...tableSks].reverse() : tableSks);
          assert.ok(pages >= 4, `${pages} pages`);
        }
        const { items } = await allPages(store, { pk, sk: { beginsWith: 'a#' }, limit: 2 });
        assert.deepEqual(
          sks(items),
          tableSks.filter((s) => s.startsWith('a#')),
        );
      });

      it('queries gsi1 in index sort key order and pages through ties without loss or repeats', async () => {
        const id = (item: Item) => `${item.pk} ${item.sk}`;
        const expected = indexed.map(id).sort();
        const all = (await store.query({ index: 'gsi1', pk: g })).items;
        assert.deepEqual(all.map(id).sort(), expected);
        const order = all.map((item) => String(item.gsi1sk));
        assert.deepEqual(order, [...order].sort());

        for (const [limit, reverse] of [
          [1, false],
          [2, false],
          [3, true],
        ] as const) {
          const { items } = await allPages(store, { index: 'gsi1', pk: g, limit, reverse });
          const ids = items.map(id);
          assert.equal(new Set(ids).size, ids.length, 'no duplicates');
          assert.deepEqual([...ids].sort(), expected, 'none missing');
          const keys = items.map((item) => String(item.gsi1sk));
          assert.deepEqual(keys, reverse ? [...keys].sort().reverse() : [...keys].sort());
        }

        const g1 = (await store.query({ index: 'gsi1', pk: g, sk: { beginsWith: 'g#1' } })).items;
        assert.deepEqual(
          g1.map(id).sort(),
          indexed
            .filter((item) => item.gsi1sk === 'g#1')
            .map(id)
            .sort(),
        );
        const between = await queryAll(store, { index: 'gsi1', pk: g, sk: { between: ['g#1', 'g#2'] } });
        assert.equal(between.length, indexed.filter((item) => item.gsi1sk !== 'g#0').length);
        const gt = await queryAll(store, { index: 'gsi1', pk: g, sk: { gt: 'g#1' }, limit: 2 });
        assert.deepEqual(new Set(gt.map((item) => item.gsi1sk)), new Set(['g#2']));
      });

      it('rejects a cursor it did not issue with InvalidCursorError', async () => {
        const b64 = (s: string) => Buffer.from(s).toString('base64url');
        for (const cursor of [
          'garbage!',
          b64('[1,2]'),
          b64('null'),
          b64('"pk"'),
          b64('{"pk":1,"sk":2}'),
          b64('{'),
        ]) {
          await assert.rejects(store.query({ pk, cursor }), rejectsWith(InvalidCursorError), cursor);
          await assert.rejects(
            store.query({ index: 'gsi1', pk: g, cursor }),
            rejectsWith(InvalidCursorError),
            cursor,
          );
        }
      });
    });

    describe('ttl', () => {
      it('an expired item is absent for get and query, and a notExists put over it succeeds', async () => {
        let now = 1_800_000_000;
        const timed = open(() => now);
        const pk = partition('ttl');
        const key = { pk, sk: 'session' };
        await timed.put({ ...key, v: 1, ttl: now + 60 });
        await timed.put({ pk, sk: 'forever', v: 0 });
        assert.equal((await timed.get(key))?.v, 1);
        assert.deepEqual(sks((await timed.query({ pk })).items), ['forever', 'session']);

        now += 60; // ttl <= now: expired
        assert.equal(await timed.get(key), undefined);
        assert.deepEqual(sks((await timed.query({ pk })).items), ['forever']);
        await timed.put({ ...key, v: 2 }, { condition: cond.notExists() });
        assert.deepEqual(await timed.get(key), { ...key, v: 2 });
      });

      it('an expired item fails exists and attribute conditions, and a delete returns nothing', async () => {
        let now = 1_800_000_000;
        const timed = open(() => now);
        const key = { pk: partition('ttl-cond'), sk: 'item' };
        await timed.put({ ...key, v: 1, ttl: now + 1 });
        now += 1;
        for (const condition of [
          cond.exists(),
          cond.attrExists('v'),
          cond.eq('v', 1),
          cond.not(cond.notExists()),
        ]) {
          await assert.rejects(
            timed.put({ ...key, v: 2 }, { condition }),
            rejectsWith(ConditionFailedError),
            JSON.stringify(condition),
          );
          await assert.rejects(timed.delete(key, { condition }), rejectsWith(ConditionFailedError));
          await assert.rejects(
            timed.update(key, { set: { v: 2 } }, { condition }),
            rejectsWith(ConditionFailedError),
            JSON.stringify(condition),
          );
        }
        await timed.put({ ...key, v: 3, ttl: now - 10 }, { condition: cond.attrNotExists('v') });
        assert.equal(await timed.delete(key, { condition: cond.notExists() }), undefined);
        assert.equal(await timed.delete(key), undefined);
      });

      it('an update or atomicAdd on an expired item starts from nothing, not from its stale attributes', async () => {
        let now = 1_800_000_000;
        const timed = open(() => now);
        const pk = partition('ttl-update');
        await timed.put({ pk, sk: 'doc', v: 1, stale: 'x', ttl: now + 1 });
        const window = { pk, sk: 'window' };
        for (let i = 1; i <= 3; i++)
          assert.equal(await timed.atomicAdd(window, 'hits', 1, { ttl: now + 10 }), i);

        now += 10;
        assert.deepEqual(await timed.update({ pk, sk: 'doc' }, { add: { v: 5 } }), { pk, sk: 'doc', v: 5 });
        assert.deepEqual(await timed.get({ pk, sk: 'doc' }), { pk, sk: 'doc', v: 5 });
        assert.equal(await timed.atomicAdd(window, 'hits', 1, { ttl: now + 10 }), 1);
        assert.deepEqual(await timed.get(window), { ...window, hits: 1, ttl: now + 10 });
        const guarded = { pk, sk: 'guarded' };
        await timed.put({ ...guarded, v: 1, ttl: now });
        assert.deepEqual(await timed.update(guarded, { set: { v: 2 } }, { condition: cond.notExists() }), {
          ...guarded,
          v: 2,
        });
      });
    });

    describe('concurrency', () => {
      it('50 parallel conditional creates of one key: exactly one winner', async () => {
        const key = { pk: partition('race'), sk: 'lock' };
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, owner) =>
            store.put({ ...key, owner }, { condition: cond.notExists() }),
          ),
        );
        const winners = results.flatMap((r, owner) => (r.status === 'fulfilled' ? [owner] : []));
        assert.equal(winners.length, 1);
        const losers = results.filter((r) => r.status === 'rejected');
        assert.equal(losers.length, 49);
        for (const r of losers) assert.ok(r.reason instanceof ConditionFailedError, String(r.reason));
        assert.deepEqual(await store.get(key), { ...key, owner: winners[0] });
      });

      it('200 parallel atomicAdd(+1) count to exactly 200, each seeing a distinct value', async () => {
        const key = { pk: partition('adds'), sk: 'counter' };
        const seen = await Promise.all(Array.from({ length: 200 }, () => store.atomicAdd(key, 'n', 1)));
        assert.deepEqual(
          [...seen].sort((a, b) => a - b),
          Array.from({ length: 200 }, (_, i) => i + 1),
        );
        assert.equal((await store.get(key))?.n, 200);
      });
    });

    describe('transactions', () => {
      it('is all-or-nothing: a failed condition cancels every op, naming the op that failed', async () => {
        const pk = partition('tx');
        await store.put({ pk, sk: 'c', v: 1 });
        await assert.rejects(
          store.transactWrite([
            { name: 'a', put: { pk, sk: 'a', v: 1 }, condition: cond.notExists() },
            { name: 'b', update: { pk, sk: 'b' }, spec: { add: { n: 1 } }, condition: cond.exists() },
            { name: 'c', delete: { pk, sk: 'c' } },
          ]),
          (err: unknown) => {
            assert.ok(err instanceof TransactionCanceledError);
            assert.deepEqual(err.failed, { b: 'ConditionalCheckFailed' });
            return true;
          },
        );
        assert.equal(await store.get({ pk, sk: 'a' }), undefined);
        assert.equal(await store.get({ pk, sk: 'b' }), undefined);
        assert.deepEqual(await store.get({ pk, sk: 'c' }), { pk, sk: 'c', v: 1 });
      });

      it('names the failed ops: the error reports each named op whose condition failed', async () => {
        const pk = partition('tx-named');
        await store.put({ pk, sk: 'taken', v: 1 });
        await store.put({ pk, sk: 'balance', credits: 3 });
        await assert.rejects(
          store.transactWrite([
            { name: 'guard', put: { pk, sk: 'taken', v: 2 }, condition: cond.notExists() },
            {
              name: 'balance',
              update: { pk, sk: 'balance' },
              spec: { add: { credits: -5 } },
              condition: cond.gte('credits', 5),
            },
            { name: 'entry', put: { pk, sk: 'entry', v: 1 }, condition: cond.notExists() },
            { put: { pk, sk: 'unnamed', v: 1 } },
          ]),
          (err: unknown) => {
            assert.ok(err instanceof TransactionCanceledError);
            assert.deepEqual(err.failed, {
              guard: 'ConditionalCheckFailed',
              balance: 'ConditionalCheckFailed',
            });
            assert.ok(err.conditionFailed('guard'));
            assert.ok(err.conditionFailed('balance'));
            assert.ok(!err.conditionFailed('entry'));
            assert.ok(!err.cancelledBy('entry'));
            assert.match(err.message, /balance: ConditionalCheckFailed/);
            return true;
          },
        );
        assert.deepEqual(await store.get({ pk, sk: 'taken' }), { pk, sk: 'taken', v: 1 });
        assert.deepEqual(await store.get({ pk, sk: 'balance' }), { pk, sk: 'balance', credits: 3 });
        assert.equal(await store.get({ pk, sk: 'entry' }), undefined);
      });

      it('applies put, update, delete and check together', async () => {
        const pk = partition('tx-ok');
        await store.put({ pk, sk: 'meta', count: 1, name: 'x' });
        await store.put({ pk, sk: 'old', v: 1 });
        await store.put({ pk, sk: 'guard', open: true });
        await store.transactWrite([
          { put: { pk, sk: 'new', v: 2 }, condition: cond.notExists() },
          { update: { pk, sk: 'meta' }, spec: { add: { count: 1 }, remove: ['name'], set: { at: 't' } } },
          { delete: { pk, sk: 'old' }, condition: cond.exists() },
          { check: { pk, sk: 'guard' }, condition: cond.eq('open', true) },
        ]);
        assert.deepEqual(await store.get({ pk, sk: 'new' }), { pk, sk: 'new', v: 2 });
        assert.deepEqual(await store.get({ pk, sk: 'meta' }), { pk, sk: 'meta', count: 2, at: 't' });
        assert.equal(await store.get({ pk, sk: 'old' }), undefined);

        await assert.rejects(
          store.transactWrite([
            { name: 'guard', check: { pk, sk: 'guard' }, condition: cond.eq('open', false) },
            { name: 'blocked', put: { pk, sk: 'blocked', v: 1 } },
          ]),
          (err: unknown) =>
            err instanceof TransactionCanceledError &&
            JSON.stringify(err.failed) === JSON.stringify({ guard: 'ConditionalCheckFailed' }),
        );
        assert.equal(await store.get({ pk, sk: 'blocked' }), undefined);
      });

      it('writeEach writes in order, each op on its own, and stops at the first failed condition', async () => {
        const pk = partition('each');
        await store.put({ pk, sk: 'held', v: 1 });
        await store.put({ pk, sk: 'gone', v: 1 });
        // Every op holds: all written, nothing answered.
        assert.equal(
          await store.writeEach([
            { name: 'a', put: { pk, sk: 'a', v: 1 }, condition: cond.notExists() },
            { update: { pk, sk: 'count' }, spec: { add: { n: 1 } } },
            { delete: { pk, sk: 'gone' }, condition: cond.exists() },
          ]),
          undefined,
        );
        assert.deepEqual(await store.get({ pk, sk: 'a' }), { pk, sk: 'a', v: 1 });
        assert.deepEqual(await store.get({ pk, sk: 'count' }), { pk, sk: 'count', n: 1 });
        assert.equal(await store.get({ pk, sk: 'gone' }), undefined);
        // The second fails: the first stays written (not all-or-nothing), the third is not tried.
        assert.equal(
          await store.writeEach([
            { name: 'first', update: { pk, sk: 'count' }, spec: { add: { n: 1 } } },
            { name: 'taken', put: { pk, sk: 'held', v: 2 }, condition: cond.notExists() },
            { name: 'after', put: { pk, sk: 'after', v: 1 } },
          ]),
          'taken',
        );
        assert.deepEqual(await store.get({ pk, sk: 'count' }), { pk, sk: 'count', n: 2 });
        assert.deepEqual(await store.get({ pk, sk: 'held' }), { pk, sk: 'held', v: 1 });
        assert.equal(await store.get({ pk, sk: 'after' }), undefined);
        // An unnamed op answers ''; a check op or two ops on one key are refused before any write.
        assert.equal(
          await store.writeEach([{ put: { pk, sk: 'held', v: 3 }, condition: cond.notExists() }]),
          '',
        );
        await assert.rejects(
          store.writeEach([
            { put: { pk, sk: 'x', v: 1 } },
            { check: { pk, sk: 'held' }, condition: cond.exists() },
          ]),
          /no check/,
        );
        await assert.rejects(
          store.writeEach([{ put: { pk, sk: 'y', v: 1 } }, { delete: { pk, sk: 'y' } }]),
          /two/,
        );
        assert.equal(await store.get({ pk, sk: 'x' }), undefined);
        assert.equal(await store.get({ pk, sk: 'y' }), undefined);
      });

      it('rejects two ops on one key, and empty transactions, before writing anything', async () => {
        const pk = partition('tx-dup');
        await assert.rejects(
          store.transactWrite([{ put: { pk, sk: 'k', v: 1 } }, { delete: { pk, sk: 'k' } }]),
          (err: unknown) =>
            err instanceof Error && !(err instanceof TransactionCanceledError) && /two/.test(err.message),
        );
        await assert.rejects(store.transactWrite([]));
        assert.equal(await store.get({ pk, sk: 'k' }), undefined);
      });

      it('treats an expired item as absent', async () => {
        const now = 1_800_000_000;
        const timed = open(() => now);
        const pk = partition('tx-ttl');
        await timed.put({ pk, sk: 'a', v: 1, stale: true, ttl: now });
        await timed.put({ pk, sk: 'b', v: 1, ttl: now });
        await timed.transactWrite([
          { update: { pk, sk: 'a' }, spec: { add: { v: 1 } } },
          { put: { pk, sk: 'b', v: 2 }, condition: cond.notExists() },
        ]);
        assert.deepEqual(await timed.get({ pk, sk: 'a' }), { pk, sk: 'a', v: 1 });
        assert.deepEqual(await timed.get({ pk, sk: 'b' }), { pk, sk: 'b', v: 2 });
      });
    });
  });
}

storeContract('SqliteStore', sqliteBackend);
storeContract('DynamoDbStore on DynamoDB Local', dynamoDbLocalBackend);
// DynamoDB Local never conflicts or throttles; the service does, and every answer must stay the same.
storeContract('DynamoDbStore on DynamoDB Local with faults', faultyDynamoDbLocalBackend);

describe('DynamoDbStore requests (mocked client)', () => {
  const NOW = 1_750_000_000;
  const TableName = 'agenthost';
  // aws-sdk-client-mock replaces DynamoDBDocumentClient.prototype.send: created in `before` (not when the file loads) so
  // the suite above talks to DynamoDB Local, and restored in `after`.
  const mockDocumentClient = () => mockClient(DynamoDBDocumentClient);
  let docMock: ReturnType<typeof mockDocumentClient>;
  let store: DynamoDbStore;

  before(() => {
    docMock = mockDocumentClient();
    store = new DynamoDbStore({
      tableName: TableName,
      client: new DynamoDBClient({
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      }),
      nowSeconds: () => NOW,
    });
  });
  after(async () => {
    docMock.restore();
    await store.close();
  });

  const transaction = () => [
    {
      name: 'key',
      put: { pk: 'ACCOUNT#1', sk: 'KEY#new', name: 'ci', scopes: ['read'] },
      condition: cond.notExists(),
    },
    {
      name: 'meta',
      update: { pk: 'ACCOUNT#1', sk: 'META' },
      spec: { set: { updated_at: '2026-01-01' }, add: { key_count: 1 } },
      condition: cond.lt('key_count', 10),
    },
    { name: 'old key', delete: { pk: 'ACCOUNT#1', sk: 'KEY#old' } },
    { name: 'profile', check: { pk: 'ACCOUNT#1', sk: 'PROFILE' }, condition: cond.exists() },
  ];

  const expectedInput = (): TransactWriteCommandInput => ({
    TransactItems: [
      {
        Put: {
          TableName,
          Item: { pk: 'ACCOUNT#1', sk: 'KEY#new', name: 'ci', scopes: ['read'] },
          ConditionExpression: 'attribute_not_exists(#pk) OR #ttl <= :now',
          ExpressionAttributeNames: { '#pk': 'pk', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
      {
        Update: {
          TableName,
          Key: { pk: 'ACCOUNT#1', sk: 'META' },
          UpdateExpression: 'SET #updated_at = :v0 ADD #key_count :v1',
          ConditionExpression: '#key_count < :v2 AND NOT (#ttl <= :now)',
          ExpressionAttributeNames: { '#updated_at': 'updated_at', '#key_count': 'key_count', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':v0': '2026-01-01', ':v1': 1, ':v2': 10, ':now': NOW },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      { Delete: { TableName, Key: { pk: 'ACCOUNT#1', sk: 'KEY#old' } } },
      {
        ConditionCheck: {
          TableName,
          Key: { pk: 'ACCOUNT#1', sk: 'PROFILE' },
          ConditionExpression: 'attribute_exists(#pk) AND NOT (#ttl <= :now)',
          ExpressionAttributeNames: { '#pk': 'pk', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
    ],
  });

  const cancelled = (reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
    new TransactionCanceledException({
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      $metadata: {},
      CancellationReasons: reasons.map((r) => ({ ...r, Message: r.Code === 'None' ? undefined : 'failed' })),
    } as ConstructorParameters<typeof TransactionCanceledException>[0]);

  it('builds the exact TransactWriteItems request for put(notExists) + update(add) + delete + check', async () => {
    docMock.reset();
    docMock.on(TransactWriteCommand).resolves({});
    await store.transactWrite(transaction());
    const calls = docMock.commandCalls(TransactWriteCommand);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.args[0].input, expectedInput());
  });

  it('maps TransactionCanceledException to TransactionCanceledError with the named ops’ codes', async () => {
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejects(
        cancelled([
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed' },
          { Code: 'None' },
          { Code: 'TransactionConflict' },
        ]),
      );
    await assert.rejects(store.transactWrite(transaction()), (err: unknown) => {
      assert.ok(err instanceof TransactionCanceledError);
      assert.deepEqual(err.failed, { meta: 'ConditionalCheckFailed', profile: 'TransactionConflict' });
      return true;
    });
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1, 'not retried');
  });

  it('retries an unconditional update whose target had expired as a put of a fresh item', async () => {
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejectsOnce(
        cancelled([
          {
            Code: 'ConditionalCheckFailed',
            Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' }, ttl: { N: '100' } },
          },
          { Code: 'None' },
        ]),
      )
      .resolves({});
    await store.transactWrite([
      { update: { pk: 'W', sk: 'hits' }, spec: { add: { n: 1 }, set: { ttl: NOW + 60 } } },
      { put: { pk: 'W', sk: 'log', v: 1 } },
    ]);
    const calls = docMock.commandCalls(TransactWriteCommand);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.args[0].input.TransactItems, [
      {
        Put: {
          TableName,
          Item: { pk: 'W', sk: 'hits', n: 1, ttl: NOW + 60 },
          ConditionExpression: '#ttl <= :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
      { Put: { TableName, Item: { pk: 'W', sk: 'log', v: 1 } } },
    ]);

    // With a condition that fails on an absent item (lt on a missing attribute), expiry does not help.
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejects(
        cancelled([
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed', Item: { ttl: { N: '100' } } },
          { Code: 'None' },
          { Code: 'None' },
        ]),
      );
    await assert.rejects(
      store.transactWrite(transaction()),
      (err: unknown) => err instanceof TransactionCanceledError && err.conditionFailed('meta'),
    );
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1);
  });

  it('replaces an expired item on update when DynamoDB returns it with the failed condition', async () => {
    docMock.reset();
    docMock.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' }, ttl: { N: String(NOW - 5) } },
      }),
    );
    docMock.on(PutCommand).resolves({});
    assert.equal(await store.atomicAdd({ pk: 'W', sk: 'hits' }, 'n', 1, { ttl: NOW + 60 }), 1);
    assert.deepEqual(docMock.commandCalls(UpdateCommand)[0]?.args[0].input, {
      TableName,
      Key: { pk: 'W', sk: 'hits' },
      UpdateExpression: 'SET #ttl = :v0 ADD #n :v1',
      ConditionExpression: 'NOT (#ttl <= :now)',
      ExpressionAttributeNames: { '#ttl': 'ttl', '#n': 'n' },
      ExpressionAttributeValues: { ':v0': NOW + 60, ':v1': 1, ':now': NOW },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    assert.deepEqual(docMock.commandCalls(PutCommand)[0]?.args[0].input, {
      TableName,
      Item: { pk: 'W', sk: 'hits', n: 1, ttl: NOW + 60 },
      ConditionExpression: '#ttl <= :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':now': NOW },
    });

    // A live item returned with the failure: the caller's condition failed.
    docMock.reset();
    docMock.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' } },
      }),
    );
    await assert.rejects(
      store.atomicAdd({ pk: 'W', sk: 'hits' }, 'n', 1, { condition: cond.lt('n', 5) }),
      rejectsWith(ConditionFailedError),
    );
    assert.equal(docMock.commandCalls(PutCommand).length, 0);
  });

  it('lets every other error through unchanged (transient ones: test/adapters/dynamodb-transient-retry.test.ts)', async () => {
    const invalid = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
    });
    docMock.reset();
    docMock.on(TransactWriteCommand).rejects(invalid);
    docMock.on(PutCommand).rejects(invalid);
    docMock.on(UpdateCommand).rejects(invalid);
    await assert.rejects(store.transactWrite(transaction()), (err) => err === invalid);
    await assert.rejects(
      store.put({ pk: 'a', sk: 'b' }, { condition: cond.notExists() }),
      (err) => err === invalid,
    );
    await assert.rejects(store.atomicAdd({ pk: 'a', sk: 'b' }, 'n', 1), (err) => err === invalid);
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1, 'not retried');
  });
});

describe('SqliteStore shared by two processes', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-shared-'));
    file = join(dir, 'store.db');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('two instances on one file (the CLI and the server): 100 interleaved atomicAdd each make 200', async () => {
    const cli = new SqliteStore(file);
    const server = new SqliteStore(file);
    const key = { pk: 'shared', sk: 'interleaved' };
    try {
      const adds: Promise<number>[] = [];
      for (let i = 0; i < 100; i++) adds.push(cli.atomicAdd(key, 'n', 1), server.atomicAdd(key, 'n', 1));
      await Promise.all(adds);
      assert.equal((await cli.get(key))?.n, 200);
      assert.equal((await server.get(key))?.n, 200);
    } finally {
      await cli.close();
      await server.close();
    }
  });

  it('a second OS process adding concurrently with this one: exactly 200', async () => {
    const key = { pk: 'shared', sk: 'processes' };
    const storeUrl = new URL('../../functions/adapters/local/sqlite-store.ts', import.meta.url).href;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(storeUrl)});
      const store = new SqliteStore(${JSON.stringify(file)});
      process.stdout.write('ready\\n');
      for (let i = 0; i < 100; i++) {
        await store.atomicAdd(${JSON.stringify(key)}, 'n', 1);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await store.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('error', reject);
      child.once('exit', () => reject(new Error(`child exited before starting: ${stderr}`)));
    });
    const store = new SqliteStore(file);
    try {
      for (let i = 0; i < 100; i++) {
        await store.atomicAdd(key, 'n', 1);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(await exited, 0, stderr);
      assert.equal((await store.get(key))?.n, 200);
    } finally {
      await store.close();
    }
  });
});
