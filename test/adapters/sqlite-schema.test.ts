/**
 * The embedded store's table (functions/adapters/local/sqlite-schema.ts): a rowid table whose
 * bodies no key index holds, and the one-time move of a database an earlier version wrote (a
 * WITHOUT ROWID table keyed by pk and sk) to it, with every item, index and expiry kept. The
 * earlier database is written here with that version's own statements, as it left files on disk.
 */
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { cond, type Item } from '../../functions/ports/store.ts';
import { walFrames } from '../helpers/wal-frames.ts';

/** The schema of the versions before the move, verbatim. */
const EARLIER_SCHEMA = `
  PRAGMA journal_mode = WAL;
  CREATE TABLE IF NOT EXISTS items (
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    gsi1pk TEXT, gsi1sk TEXT,
    gsi2pk TEXT, gsi2sk TEXT,
    ttl INTEGER,
    body TEXT NOT NULL,
    PRIMARY KEY (pk, sk)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;
  CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL;
  CREATE INDEX IF NOT EXISTS items_ttl ON items (ttl) WHERE ttl IS NOT NULL;`;

const NOW = 1_800_000_000;

/** How many of this process's file descriptors are open on `path` (Linux: /proc/self/fd). */
function openHandles(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed while listing
    }
  }).length;
}

/** The pages of the last commit in a WAL file (the frames after the commit before it). */
function lastCommitPages(walPath: string): number[] {
  const commits: number[][] = [[]];
  for (const frame of walFrames(walPath)) {
    (commits.at(-1) as number[]).push(frame.page);
    if (frame.commit) commits.push([]);
  }
  return commits.at(-2) ?? [];
}

/** Items as the earlier store wrote them (its upsert's columns; a GSI only with both its keys). */
function writeEarlier(path: string, items: Item[]): void {
  const db = new DatabaseSync(path);
  db.exec(EARLIER_SCHEMA);
  const insert = db.prepare(
    'INSERT INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const str = (v: unknown, partner: unknown) =>
    typeof v === 'string' && typeof partner === 'string' ? v : null;
  for (const item of items)
    insert.run(
      item.pk,
      item.sk,
      str(item.gsi1pk, item.gsi1sk),
      str(item.gsi1sk, item.gsi1pk),
      str(item.gsi2pk, item.gsi2sk),
      str(item.gsi2sk, item.gsi2pk),
      typeof item.ttl === 'number' ? item.ttl : null,
      JSON.stringify(item),
    );
  db.close();
}

function tableSql(path: string): string {
  const db = new DatabaseSync(path);
  try {
    return (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'items'").get() as { sql: string }).sql;
  } finally {
    db.close();
  }
}

const EARLIER_ITEMS: Item[] = [
  { pk: 'ACCOUNT#a', sk: 'PROFILE', name: 'Ada', gsi1pk: 'EMAIL#ada@example.com', gsi1sk: 'ACCOUNT#a' },
  // Larger than a WITHOUT ROWID cell keeps on its page: its body was in overflow pages.
  {
    pk: 'ACCOUNT#a',
    sk: 'CALL#2026-01-01#1',
    text: 'x'.repeat(5_000),
    gsi2pk: 'AGENT#1',
    gsi2sk: '2026-01-01',
  },
  { pk: 'ACCOUNT#a', sk: 'CALL#2026-01-02#2', text: 'ü🙂', gsi2pk: 'AGENT#1', gsi2sk: '2026-01-02' },
  { pk: 'ACCOUNT#a', sk: 'LEASE#0', lease_id: 'l', ttl: NOW - 1 }, // expired
  { pk: 'ACCOUNT#a', sk: 'COUNTER#2026-01-02', calls: 7, ttl: NOW + 86_400 },
  { pk: 'ACCOUNT#b', sk: 'PROFILE', name: 'Bo' },
];

describe('SQLite store: the table layout and the move of an earlier database', () => {
  let dir: string;
  let file: string;
  const opened: SqliteStore[] = [];
  const open = (log?: (m: string) => void) => {
    const store = new SqliteStore(file, { nowSeconds: () => NOW, log });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-sqlite-schema-'));
    file = join(dir, 'db.sqlite');
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a rowid table whose unique index holds the keys, not the bodies', () => {
    open();
    const sql = tableSql(file);
    assert.doesNotMatch(sql, /WITHOUT\s+ROWID/i);
    const db = new DatabaseSync(file);
    try {
      const indexes = db
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items'")
        .all() as {
        name: string;
        sql: string;
      }[];
      const key = indexes.find((i) => i.name === 'items_key');
      assert.match(key?.sql ?? '', /UNIQUE INDEX items_key ON items \(pk, sk\)/);
      for (const i of indexes) assert.doesNotMatch(i.sql ?? '', /body/, i.name);
    } finally {
      db.close();
    }
  });

  it('rewrites only the row for an update that keeps its index columns and expiry, and the indexes otherwise', async () => {
    const store = open();
    for (let i = 0; i < 200; i++)
      await store.put({
        pk: 'P',
        sk: `S${i}`,
        gsi1pk: 'G',
        gsi1sk: `S${i}`,
        ttl: NOW + 1_000 + i,
        pad: 'x'.repeat(200),
      });
    const key = { pk: 'P', sk: 'S7' };
    // A counter's increment: the body changes, its GSI keys and ttl do not. One page: the row's.
    await store.update(key, { add: { n: 1 } });
    assert.equal(lastCommitPages(`${file}-wal`).length, 1);
    await store.transactWrite([{ update: key, spec: { add: { n: 1 } }, condition: cond.exists() }]);
    assert.equal(lastCommitPages(`${file}-wal`).length, 1);
    assert.equal((await store.get(key))?.n, 2);
    // A changed GSI key and expiry still reach their indexes.
    await store.update(key, { set: { gsi1sk: 'moved' } });
    assert.ok(lastCommitPages(`${file}-wal`).length > 1);
    assert.deepEqual(
      (await store.query({ index: 'gsi1', pk: 'G', sk: { beginsWith: 'moved' } })).items.map((i) => i.sk),
      ['S7'],
    );
    assert.equal(store.sweepExpired(), 0);
    await store.update(key, { set: { ttl: NOW - 1 } });
    assert.equal(await store.get(key), undefined, 'expired by the new ttl');
    assert.equal(store.sweepExpired(), 1, 'the ttl index has the new expiry');
  });

  it('moves an earlier database once, keeping every item, index and expiry', async () => {
    writeEarlier(file, EARLIER_ITEMS);
    assert.match(tableSql(file), /WITHOUT\s+ROWID/i);
    const lines: string[] = [];
    const store = open((m) => lines.push(m));
    assert.doesNotMatch(tableSql(file), /WITHOUT\s+ROWID/i);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0] ?? '', /Moving the store's items/);
    assert.match(lines[1] ?? '', /Moved 6 items in \d+ ms/);

    for (const item of EARLIER_ITEMS.filter((i) => i.sk !== 'LEASE#0'))
      assert.deepEqual(await store.get({ pk: item.pk, sk: item.sk }), item);
    assert.equal(await store.get({ pk: 'ACCOUNT#a', sk: 'LEASE#0' }), undefined, 'expired stays expired');
    const calls = await store.query({ pk: 'ACCOUNT#a', sk: { beginsWith: 'CALL#' } });
    assert.deepEqual(
      calls.items.map((i) => i.sk),
      ['CALL#2026-01-01#1', 'CALL#2026-01-02#2'],
    );
    const byAgent = await store.query({ index: 'gsi2', pk: 'AGENT#1', reverse: true });
    assert.deepEqual(
      byAgent.items.map((i) => i.gsi2sk),
      ['2026-01-02', '2026-01-01'],
    );
    const byEmail = await store.query({ index: 'gsi1', pk: 'EMAIL#ada@example.com' });
    assert.deepEqual(
      byEmail.items.map((i) => i.name),
      ['Ada'],
    );

    // Keys stay unique: a conditional create of a moved key fails, a put replaces it in place.
    await assert.rejects(store.put({ pk: 'ACCOUNT#b', sk: 'PROFILE' }, { condition: cond.notExists() }));
    await store.put({ pk: 'ACCOUNT#b', sk: 'PROFILE', name: 'Bea' });
    assert.equal((await store.get({ pk: 'ACCOUNT#b', sk: 'PROFILE' }))?.name, 'Bea');
    assert.equal(await store.atomicAdd({ pk: 'ACCOUNT#a', sk: 'COUNTER#2026-01-02' }, 'calls', 1), 8);
    await store.close();

    const db = new DatabaseSync(file);
    try {
      // Six moved, the expired lease swept as the store opened, the two writes made in place.
      assert.equal((db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 5);
    } finally {
      db.close();
    }
    const again: string[] = [];
    open((m) => again.push(m));
    assert.deepEqual(again, [], 'a moved database is not moved again');
  });

  it('leaves the earlier table whole when the move fails', async () => {
    writeEarlier(file, EARLIER_ITEMS);
    // Something in the way of the move: a view under the name of the table it builds.
    const db = new DatabaseSync(file);
    db.exec("CREATE VIEW items_moved AS SELECT 1 AS pk, 'x' AS sk");
    db.close();
    assert.throws(() => open());
    assert.equal(openHandles(file), 0, 'the store that failed to open closed the file');
    assert.match(tableSql(file), /WITHOUT\s+ROWID/i);
    const check = new DatabaseSync(file);
    try {
      assert.equal((check.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 6);
      // With the obstacle gone, the next open moves it (the failed store closed its handle).
      check.exec('DROP VIEW items_moved');
    } finally {
      check.close();
    }
    const store = open();
    assert.doesNotMatch(tableSql(file), /WITHOUT\s+ROWID/i);
    assert.deepEqual(await store.get({ pk: 'ACCOUNT#b', sk: 'PROFILE' }), EARLIER_ITEMS[5]);
  });

  it('a second process opening the moved database at once finds it moved', async () => {
    writeEarlier(file, EARLIER_ITEMS);
    const first: string[] = [];
    const second: string[] = [];
    const a = open((m) => first.push(m));
    const b = open((m) => second.push(m));
    assert.equal(first.length, 2);
    assert.deepEqual(second, []);
    assert.deepEqual(await b.get({ pk: 'ACCOUNT#b', sk: 'PROFILE' }), EARLIER_ITEMS[5]);
    await a.put({ pk: 'ACCOUNT#b', sk: 'PROFILE', name: 'Cy' });
    assert.equal((await b.get({ pk: 'ACCOUNT#b', sk: 'PROFILE' }))?.name, 'Cy');
  });
});
