/**
 * The embedded store's row cache (functions/adapters/local/sqlite-row-cache.ts): a key read again
 * is not read from the database again, and the cache is never stale: a write by another
 * connection to the same file (the operator CLI, a second server) is seen by the next read, and a
 * write that rolled back never reaches it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StatementSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { REQUEST_READ_WINDOW_MS, SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { cond } from '../../functions/ports/store.ts';
import { statementsRun } from '../helpers/sqlite-statements.ts';

/** Point reads that reached SQLite while `fn` ran. */
const pointReads = (fn: () => Promise<unknown>) => statementsRun('SELECT body, ttl FROM items', fn);

describe('SQLite store: row cache', () => {
  let dir: string;
  let store: SqliteStore;
  let other: SqliteStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-row-cache-'));
    store = new SqliteStore(join(dir, 'db.sqlite'));
    other = new SqliteStore(join(dir, 'db.sqlite')); // a second connection, as the operator CLI opens
  });
  after(async () => {
    await store.close();
    await other.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a key read again, or read after this store wrote it under a condition, is answered without a database read', async () => {
    await store.put({ pk: 'KEY', sk: 'K', status: 'active' }, { condition: cond.notExists() });
    assert.equal(await pointReads(() => store.get({ pk: 'KEY', sk: 'K' })), 0);
    await store.update({ pk: 'KEY', sk: 'K' }, { set: { status: 'revoked' } });
    assert.equal(await pointReads(() => store.get({ pk: 'KEY', sk: 'K' })), 0);
    assert.equal((await store.get({ pk: 'KEY', sk: 'K' }))?.status, 'revoked');
    assert.equal(await pointReads(() => store.get({ pk: 'ABSENT', sk: 'A' })), 1);
    assert.equal(await pointReads(() => store.get({ pk: 'ABSENT', sk: 'A' })), 0);
  });

  it('a row written without a condition (a call record, a log line) is not kept: read once from the database', async () => {
    await store.put({ pk: 'LOG', sk: '1', message: 'call succeeded' });
    assert.equal(await pointReads(() => store.get({ pk: 'LOG', sk: '1' })), 1);
    assert.equal(await pointReads(() => store.get({ pk: 'LOG', sk: '1' })), 0);
    // Kept by a read, then written blind again: forgotten, and the next read sees the new row.
    await store.transactWrite([{ put: { pk: 'LOG', sk: '1', message: 'call failed' } }]);
    assert.equal(await pointReads(() => store.get({ pk: 'LOG', sk: '1' })), 1);
    assert.equal((await store.get({ pk: 'LOG', sk: '1' }))?.message, 'call failed');
    // In one group commit, a conditional write of a key and then a blind one: the blind one wins,
    // and the row the first would have kept is not.
    await Promise.all([
      store.put({ pk: 'LOG', sk: '2', message: 'first' }, { condition: cond.notExists() }),
      store.put({ pk: 'LOG', sk: '2', message: 'second' }),
    ]);
    assert.equal(await pointReads(() => store.get({ pk: 'LOG', sk: '2' })), 1);
    assert.equal((await store.get({ pk: 'LOG', sk: '2' }))?.message, 'second');
  });

  it('a write by another connection is seen by the next read (a revoked key stops at once)', async () => {
    await store.put({ pk: 'APIKEY', sk: 'H', account: 'a1' });
    assert.equal((await store.get({ pk: 'APIKEY', sk: 'H' }))?.account, 'a1');
    await other.delete({ pk: 'APIKEY', sk: 'H' });
    assert.equal(await store.get({ pk: 'APIKEY', sk: 'H' }), undefined);
    await other.put({ pk: 'APIKEY', sk: 'H', account: 'a2' });
    assert.equal((await store.get({ pk: 'APIKEY', sk: 'H' }))?.account, 'a2');
  });

  // Found by review: the cache once looked at data_version once per event-loop turn, and a turn
  // that began in the check phase (where group commits settle) spanned the next poll phase, where
  // new requests arrive: a read made after the other connection's commit returned the old row.
  it('a read right after another connection commits, in the phase where commits settle, sees it', async () => {
    await store.put({ pk: 'REVOKED', sk: 'K', status: 'active' });
    assert.ok(await store.get({ pk: 'REVOKED', sk: 'K' }));
    await new Promise((r) => setTimeout(r, 5)); // a fresh loop iteration
    setImmediate(() => void store.get({ pk: 'UNRELATED', sk: 'U' })); // a look made in this check phase
    await other.delete({ pk: 'REVOKED', sk: 'K' }); // settles in the same check phase
    assert.equal(await store.get({ pk: 'REVOKED', sk: 'K' }), undefined);
  });

  it('a row over 64 KB (an agent version with large skill files) is not kept', async () => {
    await store.put({ pk: 'LARGE', sk: 'L', skill: 'x'.repeat(70 * 1024) });
    assert.equal(await pointReads(() => store.get({ pk: 'LARGE', sk: 'L' })), 1);
    assert.equal(await pointReads(() => store.get({ pk: 'LARGE', sk: 'L' })), 1);
  });

  it('a write that failed, alone or in a group commit, leaves the cached row as it was', async () => {
    await store.put({ pk: 'VERSION', sk: 'V', state: 'live' });
    await store.get({ pk: 'VERSION', sk: 'V' });
    await assert.rejects(
      store.put({ pk: 'VERSION', sk: 'V', state: 'gone' }, { condition: cond.notExists() }),
    );
    assert.equal((await store.get({ pk: 'VERSION', sk: 'V' }))?.state, 'live');
    const outcomes = await Promise.allSettled([
      store.put({ pk: 'OTHER', sk: 'O', n: 1 }),
      store.transactWrite([
        { put: { pk: 'VERSION', sk: 'V', state: 'gone' } },
        { check: { pk: 'MISSING', sk: 'M' }, condition: cond.exists() },
      ]),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal((await store.get({ pk: 'VERSION', sk: 'V' }))?.state, 'live');
    // A transaction that fails after its first write reached the database (the second item cannot
    // be stored: JSON has no BigInt): the first write is rolled back, in the database and the cache.
    const failing = await Promise.allSettled([
      store.put({ pk: 'OTHER', sk: 'O', n: 2 }),
      store.transactWrite([
        { put: { pk: 'VERSION', sk: 'V', state: 'gone' } },
        { put: { pk: 'BAD', sk: 'B', n: 1n as unknown as number } },
      ]),
    ]);
    assert.deepEqual(
      failing.map((o) => o.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal((await store.get({ pk: 'VERSION', sk: 'V' }))?.state, 'live');
    assert.equal((await other.get({ pk: 'VERSION', sk: 'V' }))?.state, 'live');
  });

  describe('one look per request (asOneRequest)', () => {
    const A = { pk: 'WIN', sk: 'A' };
    const B = { pk: 'WIN', sk: 'B' };
    /** A and B at `n` through the other connection, in one transaction, as an operator's change. */
    const both = (n: number) => other.transactWrite([{ put: { ...A, n } }, { put: { ...B, n } }]);
    const n = async (key: { pk: string; sk: string }) => (await store.get(key))?.n;

    it('a request looks for other connections’ commits once, not before each of its reads', async () => {
      await both(1);
      await n(A);
      await n(B);
      const looks = await statementsRun('PRAGMA data_version', () =>
        store.asOneRequest(async () => {
          for (let i = 0; i < 4; i++) assert.equal(await n(i % 2 ? A : B), 1);
        }),
      );
      assert.equal(looks, 1);
    });

    it('a commit made before the request started is seen by all its reads', async () => {
      await both(1);
      assert.equal(await n(A), 1); // both cached
      assert.equal(await n(B), 1);
      await both(2);
      await store.asOneRequest(async () => {
        assert.equal(await n(A), 2);
        assert.equal(await n(B), 2);
      });
    });

    it('after a read the cache could not answer, no read answers an older row from the cache', async () => {
      await both(1);
      await n(A);
      await n(B);
      await store.asOneRequest(async () => {
        assert.equal(await n(A), 1); // as the request started
        await both(2); // the operator's change commits while the request runs
        // A key not cached is read from the database, which already holds the change: from then
        // on the cached A and B (from before it) must not be answered.
        assert.equal(await store.get({ pk: 'WIN', sk: 'ABSENT' }), undefined);
        assert.equal(await n(B), 2);
        assert.equal(await n(A), 2);
      });
    });

    // The operator can commit at any time, also between the request's last look (PRAGMA
    // data_version) and a database read. Forced here by committing just as the SELECT is called.
    async function commitBefore(
      method: 'get' | 'all',
      sql: string,
      commit: () => Promise<unknown>,
      fn: () => Promise<void>,
    ) {
      const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
      let armed = true;
      let pending: Promise<unknown> = Promise.resolve();
      (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (
        this: StatementSync,
        ...args: unknown[]
      ) {
        if (armed && this.sourceSQL.startsWith(sql)) {
          armed = false;
          // The other connection's group commit runs its transaction synchronously on flush.
          pending = commit();
          (other as unknown as { commits: { flush(): void } }).commits.flush();
        }
        return Reflect.apply(original, this, args);
      };
      try {
        await fn();
        await pending;
      } finally {
        (StatementSync.prototype as unknown as Record<string, unknown>)[method] = original;
      }
    }

    it('a commit landing just before a miss’s database read is seen by the reads after it', async () => {
      await both(1);
      await n(A); // both cached
      await n(B);
      await store.asOneRequest(() =>
        commitBefore(
          'get',
          'SELECT body, ttl FROM items',
          () => both(2),
          async () => {
            assert.equal(await store.get({ pk: 'WIN', sk: 'NEW' }), undefined); // the miss
            // A and B changed in one transaction that the miss's read already saw: A must not be
            // answered from before it.
            assert.equal(await n(A), 2);
            assert.equal(await n(B), 2);
          },
        ),
      );
    });

    it('a commit landing just before a query’s database read is seen by the reads after it', async () => {
      await both(1);
      await n(A);
      await store.asOneRequest(() =>
        commitBefore(
          'all',
          'SELECT body FROM items',
          () => both(2),
          async () => {
            const listed = await store.query({ pk: 'WIN' });
            assert.ok(listed.items.some((i) => i.sk === 'B' && i.n === 2));
            assert.equal(await n(A), 2);
          },
        ),
      );
    });

    it('a query reads the database, and the cache is brought up to it', async () => {
      await both(1);
      await n(A);
      await store.asOneRequest(async () => {
        await both(2);
        const listed = await store.query({ pk: 'WIN' });
        assert.deepEqual(
          listed.items.filter((i) => i.sk !== 'ABSENT').map((i) => i.n),
          [2, 2],
        );
        assert.equal(await n(A), 2);
      });
    });

    it('work a request leaves running reads as before once the request is over', async () => {
      await both(1);
      await n(A);
      let release: () => void = () => undefined;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let left: Promise<unknown> = Promise.resolve(undefined);
      await store.asOneRequest(async () => {
        // Started by the request, carried on after it (a background task): its context is the request's.
        left = released.then(() => n(A));
      });
      await both(2);
      release();
      assert.equal(await left, 2);
    });

    it(`a long request's reads see a commit made while it runs within ${REQUEST_READ_WINDOW_MS} ms`, async () => {
      await both(1);
      await n(A);
      await store.asOneRequest(async () => {
        assert.equal(await n(A), 1);
        await both(2);
        await new Promise((r) => setTimeout(r, REQUEST_READ_WINDOW_MS + 20));
        assert.equal(await n(A), 2);
      });
    });
  });

  it('an item past its ttl is absent though cached', async () => {
    let now = 1_000_000;
    const clocked = new SqliteStore(join(dir, 'db.sqlite'), { nowSeconds: () => now });
    try {
      await clocked.put({ pk: 'LEASE', sk: 'L', ttl: now + 1 });
      assert.ok(await clocked.get({ pk: 'LEASE', sk: 'L' }));
      now += 2;
      assert.equal(await pointReads(() => clocked.get({ pk: 'LEASE', sk: 'L' })), 0);
      assert.equal(await clocked.get({ pk: 'LEASE', sk: 'L' }), undefined);
    } finally {
      await clocked.close();
    }
  });
});
