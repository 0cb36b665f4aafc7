import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { secretKeys } from '../../functions/core/secrets/secret-record.ts';
import { resolveSecretsForRun } from '../../functions/core/secrets/secrets.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Secret = { name: string; created_at: string; updated_at: string; created?: boolean };

describe('workspace secrets (end to end over HTTP, local vault)', () => {
  let p: TestPlatform;
  let owner: { key: string; id: string; ws: string };
  let member: { key: string; id: string };
  const VALUE = 'sk-live-THIS-IS-THE-SECRET-VALUE-0123456789';
  const responses: string[] = [];
  const req = async <T = Record<string, unknown>>(...args: Parameters<TestPlatform['request']>) => {
    const res = await p.request<T>(...args);
    responses.push(res.text);
    return res;
  };

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'vault-owner', tier: 'pro' });
    const m = await createAccount(p.deps, { org: 'vault-member', tier: 'pro' });
    owner = { key: o.api_key, id: o.account.id, ws: o.workspace_id };
    member = { key: m.api_key, id: m.account.id };
    await joinWorkspace(p.request, owner.ws, owner.key, member);
  });
  after(() => p.close());

  it('creates, replaces, lists (names only), resolves for a run and deletes a secret', async () => {
    const created = await req<Secret>('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'OPENAI_API_KEY', value: VALUE },
    });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body).sort(), [
      'created',
      'created_at',
      'metadata',
      'name',
      'updated_at',
    ]);
    assert.equal(created.body.created, true);
    const createdAt = created.body.created_at;

    p.clock.advance(60_000);
    const replaced = await req<Secret>('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'OPENAI_API_KEY', value: `${VALUE}-v2` },
    });
    assert.equal(replaced.body.created, false);
    assert.equal(replaced.body.created_at, createdAt);
    assert.equal(replaced.body.updated_at, p.clock.now().toISOString());

    const list = await req<{ secrets: Secret[] }>('GET', `/workspaces/${owner.ws}/secrets`, {
      key: member.key,
    });
    assert.equal(list.status, 200, 'members may list names');
    assert.deepEqual(list.body.secrets, [
      { name: 'OPENAI_API_KEY', created_at: createdAt, updated_at: replaced.body.updated_at },
    ]);

    const run = await resolveSecretsForRun(p.deps, owner.ws, ['OPENAI_API_KEY', 'NOT_SET']);
    assert.deepEqual(run, { values: { OPENAI_API_KEY: `${VALUE}-v2` }, missing: ['NOT_SET'] });

    const del = await req('DELETE', `/workspaces/${owner.ws}/secrets/OPENAI_API_KEY`, { key: owner.key });
    assert.equal(del.status, 204);
    const after = await req<{ secrets: Secret[] }>('GET', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
    });
    assert.deepEqual(after.body.secrets, []);
    assert.deepEqual((await resolveSecretsForRun(p.deps, owner.ws, ['OPENAI_API_KEY'])).values, {});
    const again = await req('DELETE', `/workspaces/${owner.ws}/secrets/OPENAI_API_KEY`, { key: owner.key });
    assert.equal(again.status, 404);
  });

  it('lets members list but not write; non-members get 404', async () => {
    const put = await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: member.key,
      body: { name: 'X', value: 'y' },
    });
    assert.equal(put.status, 403);
    assert.equal(errorOf(put).code, 'FORBIDDEN');
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'KEEP', value: 'kept' },
    });
    const del = await req('DELETE', `/workspaces/${owner.ws}/secrets/KEEP`, { key: member.key });
    assert.equal(del.status, 403);
    const outsider = await createAccount(p.deps, { org: 'vault-outsider', tier: 'pro' });
    for (const [method, path, body] of [
      ['GET', `/workspaces/${owner.ws}/secrets`, undefined],
      ['PUT', `/workspaces/${owner.ws}/secrets`, { name: 'KEEP', value: 'overwritten' }],
      ['DELETE', `/workspaces/${owner.ws}/secrets/KEEP`, undefined],
    ] as const) {
      const res = await req(method, path, { key: outsider.api_key, body });
      assert.equal(res.status, 404, `${method} by a non-member`);
    }
    assert.deepEqual((await resolveSecretsForRun(p.deps, owner.ws, ['KEEP'])).values, { KEEP: 'kept' });
  });

  it('rejects bad names and values naming the field, and writes nothing', async () => {
    const before = (
      await p.request<{ secrets: Secret[] }>('GET', `/workspaces/${owner.ws}/secrets`, { key: owner.key })
    ).body.secrets;
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'lower_case', value: 'v' }, 'body.name'],
      [{ name: '1STARTS_WITH_DIGIT', value: 'v' }, 'body.name'],
      [{ name: 'HAS-DASH', value: 'v' }, 'body.name'],
      [{ name: '', value: 'v' }, 'body.name'],
      [{ name: 'A'.repeat(129), value: 'v' }, 'body.name'],
      [{ value: 'v' }, 'body.name'],
      [{ name: 'EMPTY_VALUE', value: '' }, 'body.value'],
      [{ name: 'TOO_BIG', value: 'x'.repeat(64 * 1024 + 1) }, 'body.value'],
      [{ name: 'MULTIBYTE_TOO_BIG', value: 'é'.repeat(32 * 1024 + 1) }, 'body.value'],
      [{ name: 'NUMBER', value: 42 }, 'body.value'],
      [{ name: 'EXTRA', value: 'v', ttl: 5 }, 'body.ttl'],
    ];
    for (const [body, field] of cases) {
      const res = await req('PUT', `/workspaces/${owner.ws}/secrets`, { key: owner.key, body });
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.ok(errorOf(res).fields.includes(field), `${JSON.stringify(body).slice(0, 60)} names ${field}`);
      const name = typeof body.name === 'string' ? body.name : '';
      if (name)
        assert.equal(await p.deps.store.get({ pk: `VAULT#${owner.ws}`, sk: `SECRET#${name}` }), undefined);
    }
    const exact = await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'EXACTLY_64K', value: 'x'.repeat(64 * 1024) },
    });
    assert.equal(exact.status, 200, '64 KB exactly is allowed');
    const badPath = await req('DELETE', `/workspaces/${owner.ws}/secrets/not-a-name`, { key: owner.key });
    assert.equal(badPath.status, 400);
    assert.ok(errorOf(badPath).fields.includes('path.name'));
    const afterList = (
      await p.request<{ secrets: Secret[] }>('GET', `/workspaces/${owner.ws}/secrets`, { key: owner.key })
    ).body.secrets;
    assert.deepEqual(
      afterList.map((s) => s.name).sort(),
      [...before.map((s) => s.name), 'EXACTLY_64K'].sort(),
    );
  });

  it('never shows a value in a response, a log line or the database files', async () => {
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'LEAK_CHECK', value: VALUE },
    });
    // Errors that carry the body back must not echo the value either.
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'bad name', value: VALUE },
    });
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: member.key,
      body: { name: 'LEAK_CHECK', value: VALUE },
    });
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      rawBody: `{"name":"LEAK_CHECK","value":"${VALUE}"`,
      headers: { 'content-type': 'application/json' },
    });
    await req('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      rawBody: `{"name":"LEAK_CHECK","value":${VALUE}}`,
      headers: { 'content-type': 'application/json' },
    });
    // Any 8-character piece of the value counts as a leak (parsers like to quote snippets).
    const pieces = Array.from({ length: VALUE.length - 7 }, (_, i) => VALUE.slice(i, i + 8));
    const leaks = (text: string) => pieces.some((piece) => text.includes(piece));
    for (const text of responses)
      assert.ok(!leaks(text), `a response leaked the value: ${text.slice(0, 300)}`);
    for (const line of p.logs) assert.ok(!leaks(line), `a log line leaked the value: ${line.slice(0, 300)}`);
    for (const file of await readdir(p.dataDir)) {
      const bytes = await readFile(join(p.dataDir, file));
      assert.ok(!bytes.includes(VALUE), `${file} holds the plaintext value`);
    }
    const listing = await p.deps.store.get(secretKeys.secret(owner.ws, 'LEAK_CHECK'));
    assert.ok(listing && !JSON.stringify(listing).includes(VALUE));
  });
});
