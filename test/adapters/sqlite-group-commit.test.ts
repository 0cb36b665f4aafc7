/**
 * The embedded store's group commit (functions/adapters/local/sqlite-store.ts): the writes
 * requested in one turn of the event loop share one SQLite commit, and each still succeeds or
 * fails on its own. The commits are counted in the WAL file itself (each frame that ends a
 * transaction carries the database size after it; other frames carry 0), so this reads what
 * SQLite wrote, not what the store says it did.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { cond, TransactionCanceledError } from '../../functions/ports/store.ts';
import { walFrames } from '../helpers/wal-frames.ts';

/** Commit frames in a WAL file. */
function walCommits(path: string): number {
  return walFrames(path).filter((f) => f.commit).length;
}

describe('SQLite store: group commit', () => {
  let dir: string;
  let store: SqliteStore;
  let wal: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-group-commit-'));
    store = new SqliteStore(join(dir, 'db.sqlite'));
    wal = join(dir, 'db.sqlite-wal');
    await store.put({ pk: 'COUNTER', sk: 'C', n: 0 });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sixteen writes requested together make one commit, each with its own outcome', async () => {
    const before = walCommits(wal);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) =>
        store.transactWrite([
          { update: { pk: 'COUNTER', sk: 'C' }, spec: { add: { n: 1 } } },
          // Every write but the eighth creates its row; the eighth's condition fails, so its
          // counter increment must be rolled back with it while the others stand.
          i === 7
            ? { check: { pk: 'COUNTER', sk: 'ABSENT' }, condition: cond.exists() }
            : { put: { pk: 'ROW', sk: String(i) }, condition: cond.notExists() },
        ]),
      ),
    );
    assert.equal(walCommits(wal) - before, 1);
    outcomes.forEach((o, i) => {
      if (i === 7) {
        assert.equal(o.status, 'rejected');
        assert.ok((o as PromiseRejectedResult).reason instanceof TransactionCanceledError);
      } else assert.equal(o.status, 'fulfilled', String((o as PromiseRejectedResult).reason));
    });
    assert.equal((await store.get({ pk: 'COUNTER', sk: 'C' }))?.n, 15);
    assert.equal((await store.query({ pk: 'ROW' })).items.length, 15);
  });

  it('a write that fails after writing rows is undone alone, though the commit runs without savepoints', async () => {
    // The group commit runs its writes without a savepoint each: a failed condition throws before
    // anything is written. This write fails after its first put is written (its second item
    // cannot be stored), so the commit is made again with savepoints: the first put is undone,
    // and the writes beside it stand.
    const before = walCommits(wal);
    const [first, failing, last] = await Promise.allSettled([
      store.put({ pk: 'UNDO', sk: 'first' }),
      store.transactWrite([
        { put: { pk: 'UNDO', sk: 'written' } },
        { put: { pk: 'UNDO', sk: 'unstorable', n: 1n as unknown as number } },
      ]),
      store.put({ pk: 'UNDO', sk: 'last' }),
    ]);
    assert.equal(first?.status, 'fulfilled');
    assert.equal(failing?.status, 'rejected');
    assert.equal(last?.status, 'fulfilled');
    assert.equal(walCommits(wal) - before, 1);
    assert.deepEqual(
      (await store.query({ pk: 'UNDO' })).items.map((i) => i.sk),
      ['first', 'last'],
    );
  });

  it('a later write in the same commit sees the earlier ones', async () => {
    const [first, second] = await Promise.allSettled([
      store.put({ pk: 'ONCE', sk: 'X', by: 'first' }, { condition: cond.notExists() }),
      store.put({ pk: 'ONCE', sk: 'X', by: 'second' }, { condition: cond.notExists() }),
    ]);
    assert.equal(first?.status, 'fulfilled');
    assert.equal(second?.status, 'rejected');
    assert.equal((await store.get({ pk: 'ONCE', sk: 'X' }))?.by, 'first');
  });

  it('a write awaited alone is committed before its promise settles', async () => {
    const before = walCommits(wal);
    await store.put({ pk: 'ALONE', sk: '1' });
    assert.equal(walCommits(wal) - before, 1);
    await store.put({ pk: 'ALONE', sk: '2' });
    assert.equal(walCommits(wal) - before, 2);
  });

  it('once an answer reporting queued writes went out, each read (a get or a query) commits them first', async () => {
    const reads = {
      get: async () => (await store.get({ pk: 'ANSWERED', sk: 'get' }))?.sk,
      query: async () => (await store.query({ pk: 'ANSWERED', sk: { beginsWith: 'query' } })).items[0]?.sk,
    };
    for (const [sk, read] of Object.entries(reads)) {
      const before = walCommits(wal);
      const written = store.put({ pk: 'ANSWERED', sk });
      // Queued, not committed yet.
      assert.equal(walCommits(wal) - before, 0);
      const settled = store.answeredBeforeCommit();
      // Committed by the read, in the same turn, before the group commit's own turn came.
      assert.equal(await read(), sk);
      assert.equal(walCommits(wal) - before, 1);
      await written;
      assert.equal(walCommits(wal) - before, 1, 'committed once');
      settled();
    }
  });

  it('until the answered work settles, a write it requests later is also committed before the next read', async () => {
    const first = store.put({ pk: 'LATER', sk: 'first' });
    const settled = store.answeredBeforeCommit();
    assert.equal((await store.get({ pk: 'LATER', sk: 'first' }))?.sk, 'first');
    await first;
    // The work goes on after its first write committed (a record written alone after its first
    // transaction was refused): the answer still reports it.
    const second = store.put({ pk: 'LATER', sk: 'second' });
    assert.equal((await store.get({ pk: 'LATER', sk: 'second' }))?.sk, 'second');
    await second;
    settled();
    // Settled: reads leave queued writes to their group commit again.
    const third = store.put({ pk: 'LATER', sk: 'third' });
    assert.equal(await store.get({ pk: 'LATER', sk: 'third' }), undefined);
    await third;
    assert.equal((await store.get({ pk: 'LATER', sk: 'third' }))?.sk, 'third');
  });

  it('without an answer, reads leave queued writes to their group commit', async () => {
    const before = walCommits(wal);
    const written = store.put({ pk: 'UNANSWERED', sk: '1' });
    assert.equal(await store.get({ pk: 'UNANSWERED', sk: '1' }), undefined);
    assert.equal(walCommits(wal) - before, 0);
    await written;
    assert.equal(walCommits(wal) - before, 1);
  });

  it('a savepoint whose journal passes 64 KiB keeps it in memory: the only writes are the WAL frames', async () => {
    // 48 rows of 3 KB each fill their own pages; then two writes in one group commit each rewrite
    // 24 of them, so each write's savepoint journals 24 pages (98 KB), past SQLite's 64 KiB
    // spill threshold. Spilled, the journal is a temporary file written page by page: two more
    // write calls a page. The process's write calls are read from the kernel (/proc/self/io).
    const rows = Array.from({ length: 48 }, (_, i) => ({ pk: 'WIDE', sk: String(i).padStart(2, '0') }));
    for (const row of rows) await store.put({ ...row, fill: 'a'.repeat(3000) });
    const writes = () => Number(/syscw: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
    const framesBefore = walFrames(wal).length;
    const before = writes();
    const rewrite = (half: typeof rows) =>
      store.transactWrite(half.map((row) => ({ put: { ...row, fill: 'b'.repeat(3000) } })));
    await Promise.all([rewrite(rows.slice(0, 24)), rewrite(rows.slice(24))]);
    const written = writes() - before;
    const frames = walFrames(wal).length - framesBefore;
    assert.ok(frames >= 48, `the rewrite wrote ${frames} WAL frames`);
    // Each WAL frame is written with at most two calls (its header and its page); up to 20 more
    // for anything else the process writes meanwhile. Spilled journals add about 60 (163 for 48
    // frames without the setting).
    assert.ok(written <= 2 * frames + 20, `${written} write calls for ${frames} WAL frames`);
  });
});
