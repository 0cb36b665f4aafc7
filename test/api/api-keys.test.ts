import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiKeyKeys } from '../../functions/core/api-keys/api-key-items.ts';
import { hashApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { deleteApiKey } from '../../functions/core/api-keys/api-keys.ts';
import { SQLITE_FILE } from '../../functions/platform/local-deps.ts';
import type { PlatformError } from '../../functions/shared/errors.ts';
import { BACKENDS_WITH_FAULTS, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Key = {
  id: string;
  name: string;
  prefix: string;
  agent: string | null;
  created_at: string;
  api_key?: string;
};

for (const backend of BACKENDS_WITH_FAULTS) {
  describe(`API keys (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p.close());

    it('creates a key shown once with the recognisable prefix, lists keys without secrets', async () => {
      const created = await p.request<Key>('POST', '/api-keys', { body: { name: 'ci' } });
      assert.equal(created.status, 201);
      assert.match(created.body.api_key ?? '', /^ahk_[A-Za-z0-9_-]{43}$/);
      assert.equal(created.body.name, 'ci');
      assert.ok(created.body.prefix.startsWith('ahk_'));
      assert.ok(created.body.api_key?.startsWith(created.body.prefix.replace('…', '')));

      const list = await p.request<{ api_keys: Key[] }>('GET', '/api-keys');
      assert.equal(list.status, 200);
      assert.equal(list.body.api_keys.length, 2, 'the bootstrap key and the new one');
      const listed = list.body.api_keys.find((k) => k.id === created.body.id);
      assert.ok(listed);
      assert.equal(listed.api_key, undefined);
      assert.ok(!list.text.includes(created.body.api_key as string), 'the key never appears in a listing');
      assert.ok(!list.text.includes(hashApiKey(created.body.api_key as string)), 'nor its hash');

      const works = await p.request('GET', '/tasks', { key: created.body.api_key });
      assert.equal(works.status, 200);
    });

    it('accepts an empty body (a key with no name)', async () => {
      const res = await p.request<Key>('POST', '/api-keys', { rawBody: '' });
      assert.equal(res.status, 201);
      assert.equal(res.body.name, 'unnamed');
    });

    it('stores only a hash of the key', async () => {
      const created = await p.request<Key>('POST', '/api-keys', { body: { name: 'hash-check' } });
      const secret = created.body.api_key as string;
      const byHash = await p.deps.store.get(apiKeyKeys.byHash(hashApiKey(secret)));
      assert.ok(byHash, 'the key is found by its hash');
      const listing = await p.deps.store.get(
        apiKeyKeys.ofAccount(String(byHash.account_id), created.body.id),
      );
      assert.ok(!JSON.stringify([byHash, listing]).includes(secret), 'no stored item holds the key');
      if (backend === 'sqlite') {
        const db = await readFile(join(p.dataDir, SQLITE_FILE));
        const wal = await readFile(join(p.dataDir, `${SQLITE_FILE}-wal`)).catch(() => Buffer.alloc(0));
        assert.ok(
          !db.includes(secret) && !wal.includes(secret),
          'the plaintext key is not in the database files',
        );
      }
    });

    it('refuses a deleted key on the very next request', async () => {
      const created = await p.request<Key>('POST', '/api-keys', { body: { name: 'short-lived' } });
      const key = created.body.api_key as string;
      assert.equal((await p.request('GET', '/api-keys', { key })).status, 200);
      const del = await p.request('DELETE', `/api-keys/${created.body.id}`, { key });
      assert.equal(del.status, 204);
      const next = await p.request('GET', '/api-keys', { key });
      assert.equal(next.status, 401);
      assert.equal(errorOf(next).code, 'UNAUTHORIZED');
      const listed = await p.request<{ api_keys: Key[] }>('GET', '/api-keys');
      assert.ok(!listed.body.api_keys.some((k) => k.id === created.body.id));
    });

    it('answers 404 for an unknown key id and for another account’s key id', async () => {
      const other = await p.createAccount('key-owner');
      const theirs = await p.request<{ api_keys: Key[] }>('GET', '/api-keys', { key: other.key });
      const theirId = theirs.body.api_keys[0]?.id as string;
      const res = await p.request('DELETE', `/api-keys/${theirId}`);
      assert.equal(res.status, 404);
      assert.equal(errorOf(res).code, 'NOT_FOUND');
      assert.equal(
        (await p.request('GET', '/api-keys', { key: other.key })).status,
        200,
        'their key still works',
      );
      assert.equal((await p.request('DELETE', '/api-keys/not-a-key')).status, 404);
    });

    it('keeps an account’s last key (409) so it cannot lock itself out', async () => {
      const solo = await p.createAccount('solo-org');
      const keys = await p.request<{ api_keys: Key[] }>('GET', '/api-keys', { key: solo.key });
      assert.equal(keys.body.api_keys.length, 1);
      const res = await p.request('DELETE', `/api-keys/${keys.body.api_keys[0]?.id}`, { key: solo.key });
      assert.equal(res.status, 409);
      assert.equal(errorOf(res).code, 'CONFLICT');
      assert.equal((await p.request('GET', '/api-keys', { key: solo.key })).status, 200);
    });

    it('never deletes the last key even when two deletions race', async () => {
      const duo = await p.createAccount('duo-org');
      const second = await p.request<Key>('POST', '/api-keys', { key: duo.key, body: { name: 'second' } });
      const list = await p.request<{ api_keys: Key[] }>('GET', '/api-keys', { key: duo.key });
      const ids = list.body.api_keys.map((k) => k.id);
      assert.equal(ids.length, 2);
      const results = await Promise.allSettled(ids.map((id) => deleteApiKey(p.deps, duo.accountId, id)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.equal((rejected.reason as PlatformError).code, 'CONFLICT');
      const alive = await Promise.all(
        [duo.key, second.body.api_key as string].map((k) => p.request('GET', '/api-keys', { key: k })),
      );
      assert.equal(alive.filter((r) => r.status === 200).length, 1, 'exactly one key still works');
    });

    it('answers 401 UNAUTHORIZED for a missing, malformed or unknown key', async () => {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: 'Bearer' },
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: 'Bearer ahk_thisisnotakeythisisnotakeythisisnotakey1234' },
      ]) {
        const res = await p.request('GET', '/tasks', { key: null, headers });
        assert.equal(res.status, 401, JSON.stringify(headers));
        const err = errorOf(res);
        assert.equal(err.code, 'UNAUTHORIZED');
        assert.equal(err.is_retryable, false);
      }
    });

    it('validates the create body', async () => {
      for (const body of [{ name: '' }, { name: 7 }, { agent: 'Not An Agent' }, { scopes: ['all'] }]) {
        const res = await p.request('POST', '/api-keys', { body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(errorOf(res).code, 'INVALID_INPUT');
      }
    });
  });
}
