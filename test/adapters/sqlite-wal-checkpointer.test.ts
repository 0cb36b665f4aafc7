/**
 * The embedded store's WAL checkpoints on a worker thread (functions/adapters/local/
 * sqlite-wal-checkpointer.ts): once the worker has started, a commit that takes the WAL past
 * SQLite's 1,000-page mark no longer copies it into the database file itself (the copy and its
 * syncs held the main thread for milliseconds); the worker does, soon after. Read from the files:
 * only a checkpoint writes pages into the database file.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';

/** 1,200 rows of 3 KB, a page each, written in one group commit: past the 1,000-page mark. */
async function writePages(store: SqliteStore): Promise<void> {
  await Promise.all(
    Array.from({ length: 1200 }, (_, i) => store.put({ pk: 'PAGE', sk: String(i), fill: 'p'.repeat(3000) })),
  );
}

describe('SQLite store: WAL checkpoints on a worker thread', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-checkpointer-'));
    path = join(dir, 'db.sqlite');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('once started, the commit past 1,000 WAL pages leaves the copy to the worker, which makes it soon after', async () => {
    const store = new SqliteStore(path, { checkpoints: { startAfterCommits: 1, delayMs: 300 } });
    try {
      await store.put({ pk: 'FIRST', sk: '1' }); // the worker starts
      const before = statSync(path).size;
      await writePages(store);
      assert.ok(statSync(path).size - before < 100_000, 'the main connection copied the WAL itself');
      const deadline = Date.now() + 10_000;
      while (statSync(path).size - before < 3_000_000 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.ok(statSync(path).size - before >= 3_000_000, 'the worker did not copy the WAL');
      assert.equal((await store.get({ pk: 'PAGE', sk: '1199' }))?.fill, 'p'.repeat(3000));
    } finally {
      await store.close();
    }
  });

  it('a store that has made few commits checkpoints inline, as SQLite does, with no thread of its own', async () => {
    const store = new SqliteStore(path, { checkpoints: { startAfterCommits: 200 } });
    try {
      const before = statSync(path).size;
      await writePages(store);
      assert.ok(statSync(path).size - before >= 3_000_000, 'the commit did not checkpoint inline');
    } finally {
      await store.close();
    }
  });

  it("closing stops the worker's connection before the store's own, which then removes the WAL", async () => {
    const store = new SqliteStore(path, { checkpoints: { startAfterCommits: 1 } });
    await store.put({ pk: 'FIRST', sk: '1' });
    await writePages(store);
    assert.ok(existsSync(`${path}-wal`));
    await store.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the WAL is still there: a connection was left open');
  });
});
