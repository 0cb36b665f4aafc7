import type { DatabaseSync } from 'node:sqlite';

/**
 * The embedded store's table, and the move of a database written by an earlier version to it.
 *
 * Why a rowid table with a unique (pk, sk) index, not a WITHOUT ROWID table keyed by (pk, sk): in a
 * WITHOUT ROWID table each row is a cell of an index B-tree, whose cells keep at most about 1,000
 * bytes on a 4 KB page and spill the rest to overflow pages. A call's record is about that size, so
 * every insert, delete and point read compared its key against cells whose overflow SQLite reads
 * from the file (its overflow reads bypass the page cache): 28 `pread`s a prompt call under strace,
 * and an insert cost about twice what it does here. In a rowid table the body lives in the table's
 * leaves (cells up to about 4,000 bytes before overflow), new rows append, and the key index holds
 * only (pk, sk, rowid), so no key comparison ever reads a body. docs/performance.md, item 11.
 */
const CREATE_ITEMS = `
  CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    gsi1pk TEXT, gsi1sk TEXT,
    gsi2pk TEXT, gsi2sk TEXT,
    ttl INTEGER,
    body TEXT NOT NULL
  );`;

const CREATE_INDEXES = `
  CREATE UNIQUE INDEX IF NOT EXISTS items_key ON items (pk, sk);
  CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;
  CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL;
  CREATE INDEX IF NOT EXISTS items_ttl ON items (ttl) WHERE ttl IS NOT NULL;`;

/**
 * Creates the table and its indexes, or moves a database written before item 11 (a WITHOUT ROWID
 * `items`) to them: in one transaction, so a failure leaves the old table whole, and under the
 * write lock, so a second process starting at the same time finds the move done and does nothing.
 */
export function openItemsTable(db: DatabaseSync, log: (message: string) => void = () => {}): void {
  if (!isWithoutRowid(db)) {
    db.exec(CREATE_ITEMS + CREATE_INDEXES);
    return;
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    if (isWithoutRowid(db)) {
      log("Moving the store's items to the current table layout (once, in one transaction)");
      const started = performance.now();
      db.exec(CREATE_ITEMS.replace('items (', 'items_moved ('));
      // The count comes from the copy itself: a count(*) first would read the whole table twice.
      const { changes } = db
        .prepare(
          `INSERT INTO items_moved (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, body)
           SELECT pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, body FROM items ORDER BY pk, sk`,
        )
        .run();
      db.exec(`
        DROP TABLE items;
        ALTER TABLE items_moved RENAME TO items;
        ${CREATE_INDEXES}
      `);
      log(`Moved ${changes} items in ${Math.round(performance.now() - started)} ms`);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** Whether `items` is the earlier WITHOUT ROWID table (absent: false). */
function isWithoutRowid(db: DatabaseSync): boolean {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'items'").get() as
    | { sql: string }
    | undefined;
  return row !== undefined && /WITHOUT\s+ROWID/i.test(row.sql);
}
