/**
 * The Store contract: one suite, run against every adapter (SQLite on a temp file, DynamoDB on
 * DynamoDB Local, AWS's own engine, on a loopback port), transactions included. The DynamoDB
 * adapter's requests are checked against the exact shape it builds in
 * dynamodb-store-requests.test.ts. Here items, conditions, updates and queries; TTL, concurrency and
 * transactions in store-contract-ttl-transactions.test.ts.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { evaluateCondition } from '../../functions/adapters/store-semantics.ts';
import {
  type Condition,
  ConditionFailedError,
  cond,
  InvalidCursorError,
  type Item,
  queryAll,
  type Store,
} from '../../functions/ports/store.ts';
import type { StoreBackend } from '../helpers/store-backends.ts';
import { allPages, partition, rejectsWith, STORE_ADAPTERS, sks, storeOnBackend } from './store-contract.ts';

function storeContract(name: string, start: () => Promise<StoreBackend>): void {
  describe(`Store contract: ${name}`, () => {
    const backend = storeOnBackend(start);
    let store: Store;
    before(() => {
      store = backend.store;
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
  });
}

for (const [name, start] of STORE_ADAPTERS) storeContract(name, start);
