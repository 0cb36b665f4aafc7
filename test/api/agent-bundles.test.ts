/**
 * Agents' code bundles over HTTP: uploads with their type, size and path checks, and the bundles of
 * purged versions deleted by housekeeping.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import yazl from 'yazl';
import { BUNDLE_LIMITS } from '../../functions/shared/bundle-limits.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { type Agent, prompt, type Registry, startRegistry, tool } from '../helpers/registry.ts';

async function zipWith(name: string): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  // yazl refuses unsafe names; write a same-length placeholder and swap the bytes afterwards.
  const placeholder = 'x'.repeat(name.length);
  zip.addBuffer(Buffer.from('evil'), placeholder);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  const data = Buffer.concat(chunks);
  let at = data.indexOf(placeholder);
  while (at >= 0) {
    data.write(name, at, 'latin1');
    at = data.indexOf(placeholder, at + 1);
  }
  return data;
}

describe('agent registry (end to end over HTTP)', () => {
  let p: TestPlatform;
  let owner: Registry['owner'];
  let member: Registry['member'];
  let publish: Registry['publish'];

  before(async () => {
    ({ p, owner, member, publish } = await startRegistry());
  });
  after(() => p.close());

  it('uploads code bundles with type, size and path checks', async () => {
    const t = (await publish(tool('bundled'))).body;
    const data = await bundleOf({ 'index.js': 'console.log(JSON.stringify({ ok: true }))\n' });
    const up = await p.request<Agent>('POST', `/agents/${t.id}/upload`, {
      key: owner.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.bundle?.format, 'tar.gz');
    assert.equal(up.body.bundle?.size_bytes, data.length);
    const stored = await p.deps.bundles.get(`bundles/${owner.org}/bundled/v1.tar.gz`);
    assert.deepEqual(stored, data);

    const promptAgent = (await publish(prompt('no-bundle'))).body;
    const refused = await p.request('POST', `/agents/${promptAgent.id}/upload`, {
      key: owner.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(refused.status, 400);
    assert.match(errorOf(refused).message, /only code-runtime and managed-loop agents take a code bundle/);

    const text = await p.request('POST', `/agents/${t.id}/upload`, {
      key: owner.key,
      rawBody: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.status, 415);
    assert.equal(errorOf(text).code, 'UNSUPPORTED_TYPE');

    const huge = await p.request('POST', `/agents/${t.id}/upload`, {
      key: owner.key,
      rawBody: Buffer.alloc(BUNDLE_LIMITS.maxArchiveBytes + 1),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(huge.status, 413);
    assert.equal(errorOf(huge).code, 'DOCUMENT_TOO_LARGE');
    // The largest archive is the largest binary body AWS carries (base64 within the event budget).
    const atLimit = Buffer.alloc(BUNDLE_LIMITS.maxArchiveBytes);
    atLimit.set([0x1f, 0x8b, 0x08]); // gzip's magic: judged as a (broken) archive, not by its size
    const largest = await p.request('POST', `/agents/${t.id}/upload`, {
      key: owner.key,
      rawBody: atLimit,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(largest.status, 422, `at the limit the bytes are read and judged: ${largest.text}`);

    for (const name of ['../evil.js', '/etc/passwd']) {
      const bad = await p.request('POST', `/agents/${t.id}/upload`, {
        key: owner.key,
        rawBody: await zipWith(name),
        headers: { 'content-type': 'application/zip' },
      });
      assert.equal(bad.status, 422, `${name}: ${bad.text.slice(0, 200)}`);
      assert.equal(errorOf(bad).code, 'UNPROCESSABLE');
    }
    const after = await p.request<Agent>('GET', `/agents/${t.id}`, { key: owner.key });
    assert.equal(after.body.bundle?.sha256, up.body.bundle?.sha256, 'refused uploads left the bundle alone');

    const byMember = await p.request('POST', `/agents/${t.id}/upload`, {
      key: member.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(byMember.status, 403);
  });
});

describe('bundles of purged versions', () => {
  it('are deleted by housekeeping once the soft-deleted version’s retention has passed', async () => {
    const { startTestPlatform } = await import('../helpers/platform.ts');
    const { createAccount } = await import('../../functions/core/accounts/account.ts');
    const { packDirectory } = await import('../../functions/cli/pack.ts');
    const { runHousekeeping } = await import('../../functions/jobs/housekeeping.ts');
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    try {
      const o = await createAccount(p.deps, { org: 'purgeco', tier: 'pro' });
      const pub = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
        key: o.api_key,
        body: {
          name: 'old',
          type: 'tool',
          description: 'Old.',
          supported_providers: ['any'],
          runtime: { command: 'node i.js' },
          required_secrets: [],
        },
      });
      const dir = await mkdtemp(join(tmpdir(), 'agenthost-purge-'));
      await writeFile(join(dir, 'i.js'), 'console.log("{}")');
      const bundle = (await packDirectory(dir)).data;
      await rm(dir, { recursive: true, force: true });
      await p.request('POST', `/agents/${pub.body.id}/upload`, {
        key: o.api_key,
        rawBody: bundle,
        headers: { 'content-type': 'application/gzip' },
      });
      const item = await p.deps.store.get({ pk: `AGENT#${pub.body.id}`, sk: 'AGENT' });
      assert.ok(item);
      const key = (item.bundle as { key: string }).key;
      assert.ok(await p.deps.bundles.get(key));
      assert.equal((await p.request('DELETE', `/agents/${pub.body.id}`, { key: o.api_key })).status, 204);
      assert.equal((await runHousekeeping(p.deps)).purged, 0, 'not before the retention has passed');
      assert.ok(await p.deps.bundles.get(key));
      p.clock.advance(31 * 86_400_000);
      assert.equal((await runHousekeeping(p.deps)).purged, 1);
      assert.equal(await p.deps.bundles.get(key), undefined);
      assert.equal((await runHousekeeping(p.deps)).purged, 0, 'once');
    } finally {
      await p.close();
    }
  });
});
