/**
 * The Store contract (as store-contract.test.ts), against every adapter: TTL (an expired item is
 * absent, to reads, conditions and transactions), concurrent writes, and transactions.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  ConditionFailedError,
  cond,
  type Store,
  TransactionCanceledError,
} from '../../functions/ports/store.ts';
import type { StoreBackend } from '../helpers/store-backends.ts';
import { partition, rejectsWith, STORE_ADAPTERS, sks, storeOnBackend } from './store-contract.ts';

function storeContract(name: string, start: () => Promise<StoreBackend>): void {
  describe(`Store contract: ${name}`, () => {
    const backend = storeOnBackend(start);
    let store: Store;
    const open = backend.open;
    before(() => {
      store = backend.store;
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

for (const [name, start] of STORE_ADAPTERS) storeContract(name, start);
