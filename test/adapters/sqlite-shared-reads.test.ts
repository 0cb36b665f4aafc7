/**
 * The embedded store's shared reads (ReadOptions.shared, ports/store.ts): a key read shared again
 * gives the same frozen item, parsed once, which a reader cannot change; a read that is not shared
 * gets its own item as before; and a shared item is never stale: a write through this store or by
 * another connection, and an expiry, are seen by the next shared read.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { cond, SHARED } from '../../functions/ports/store.ts';

describe('SQLite store: shared reads', () => {
  let dir: string;
  let store: SqliteStore;
  let other: SqliteStore;
  let now = 1_000;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-shared-reads-'));
    store = new SqliteStore(join(dir, 'db.sqlite'), { nowSeconds: () => now });
    other = new SqliteStore(join(dir, 'db.sqlite'), { nowSeconds: () => now });
  });
  after(async () => {
    await store.close();
    await other.close();
    await rm(dir, { recursive: true, force: true });
  });

  const key = { pk: 'AGENT#1', sk: 'AGENT' };

  it('gives every shared reader of a key the same frozen item, and any other reader its own', async () => {
    await store.put(
      { ...key, manifest: { tags: ['a'], schema: { type: 'object' } } },
      { condition: cond.notExists() },
    );
    const first = await store.get(key, SHARED);
    const second = await store.get(key, SHARED);
    assert.ok(first);
    assert.equal(second, first);
    assert.ok(Object.isFrozen(first));
    const manifest = first.manifest as { tags: string[]; schema: Record<string, unknown> };
    assert.throws(() => manifest.tags.push('b'), TypeError);
    assert.throws(() => {
      manifest.schema.type = 'array';
    }, TypeError);
    const own = await store.get(key);
    assert.notEqual(own, first);
    assert.ok(own && !Object.isFrozen(own));
    assert.deepEqual(own, first);
  });

  it('sees a write through this store, one by another connection, and an expiry', async () => {
    const before = await store.get(key, SHARED);
    await store.update(key, { set: { status: 'revoked' } });
    const updated = await store.get(key, SHARED);
    assert.notEqual(updated, before);
    assert.equal(updated?.status, 'revoked');
    await other.update(key, { set: { status: 'active', ttl: now + 10 } });
    assert.equal((await store.get(key, SHARED))?.status, 'active');
    now += 20;
    assert.equal(await store.get(key, SHARED), undefined);
    await store.delete(key);
    assert.equal(await store.get(key, SHARED), undefined);
  });
});
