/**
 * The public directory over HTTP: listing with filters, details and downloads by kind of agent,
 * and forks of source-available agents.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { bundleOf } from '../helpers/bundles.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { type Agent, prompt, type Registry, startRegistry, tool } from '../helpers/registry.ts';

describe('agent registry (end to end over HTTP)', () => {
  let p: TestPlatform;
  let owner: Registry['owner'];
  let outsider: Registry['outsider'];
  let publish: Registry['publish'];

  before(async () => {
    ({ p, owner, outsider, publish } = await startRegistry());
  });
  after(() => p.close());

  it('serves the public directory: listing with filters, details and downloads by kind of agent', async () => {
    const open = (
      await publish(tool('open-tool', { is_public: true, allow_local_download: true, tags: ['files'] }))
    ).body;
    await p.request('POST', `/agents/${open.id}/upload`, {
      key: owner.key,
      rawBody: await bundleOf({ 'index.js': 'console.log("{}")\n' }),
      headers: { 'content-type': 'application/gzip' },
    });
    await publish(prompt('server-only', { is_public: true, tags: ['files'] }));
    await publish(prompt('paid', { is_public: true, price_credits: 5 }));
    await publish(prompt('private-one'));

    const all = await p.request<{ agents: { name: string; paid: boolean }[]; total: number }>(
      'GET',
      '/public/agents',
      {
        key: null,
      },
    );
    assert.equal(all.status, 200);
    const names = all.body.agents.map((a) => a.name);
    for (const n of ['open-tool', 'server-only', 'paid']) assert.ok(names.includes(n), n);
    assert.ok(!names.includes('private-one'));
    const tagged = await p.request<{ agents: { name: string }[] }>('GET', '/public/agents?tag=files', {
      key: null,
    });
    assert.deepEqual(tagged.body.agents.map((a) => a.name).sort(), ['open-tool', 'server-only']);
    const tools = await p.request<{ agents: { name: string }[] }>('GET', '/public/agents?type=tool', {
      key: null,
    });
    assert.deepEqual(
      tools.body.agents.map((a) => a.name),
      ['open-tool'],
    );
    // q: text in org/name or the description, any case; combined with the other filters.
    const searched = await p.request<{ agents: { name: string }[] }>('GET', '/public/agents?q=OPEN-T', {
      key: null,
    });
    assert.deepEqual(
      searched.body.agents.map((a) => a.name),
      ['open-tool'],
    );
    const byOrg = await p.request<{ agents: { name: string }[] }>(
      'GET',
      `/public/agents?q=${owner.org}/&tag=files`,
      { key: null },
    );
    assert.deepEqual(byOrg.body.agents.map((a) => a.name).sort(), ['open-tool', 'server-only']);
    const none = await p.request<{ agents: unknown[]; total: number }>(
      'GET',
      '/public/agents?q=private-one',
      {
        key: null,
      },
    );
    assert.deepEqual([none.body.agents.length, none.body.total], [0, 0]);
    const paged = await p.request<{ agents: unknown[]; total: number }>(
      'GET',
      '/public/agents?limit=1&offset=1',
      { key: null },
    );
    assert.equal(paged.body.agents.length, 1);
    assert.equal(paged.body.total, all.body.total);

    const serverOnly = await p.request<Record<string, unknown>>(
      'GET',
      `/public/agents/${owner.org}/server-only/v1`,
      { key: null },
    );
    assert.equal(serverOnly.status, 200);
    assert.equal(serverOnly.body.name, 'server-only');
    assert.ok(serverOnly.body.input_schema);
    for (const hidden of ['prompt_template', 'manifest', 'skill_files'])
      assert.equal(hidden in serverOnly.body, false, hidden);
    const paidDetails = await p.request<Record<string, unknown>>(
      'GET',
      `/public/agents/${owner.org}/paid/v1`,
      { key: null },
    );
    assert.equal('prompt_template' in paidDetails.body, false);
    assert.equal(paidDetails.body.paid, true);
    const openDetails = await p.request<Record<string, unknown>>(
      'GET',
      `/public/agents/${owner.org}/open-tool/v1`,
      { key: null },
    );
    assert.ok(openDetails.body.manifest);

    const disabled = await p.request('GET', `/public/agents/${owner.org}/server-only/v1/download`, {
      key: null,
    });
    assert.equal(disabled.status, 403);
    assert.equal(errorOf(disabled).code, 'DOWNLOAD_DISABLED');
    const paid = await p.request('GET', `/public/agents/${owner.org}/paid/v1/download`, { key: null });
    assert.equal(paid.status, 403);
    assert.equal(errorOf(paid).code, 'PAID_AGENT_SERVER_ONLY');
    const dl = await p.request<Record<string, unknown> & { bundle: { url: string; sha256: string } }>(
      'GET',
      `/public/agents/${owner.org}/open-tool/v1/download`,
      { key: null },
    );
    assert.equal(dl.status, 200, dl.text);
    for (const f of [
      'type',
      'name',
      'version',
      'description',
      'run_mode',
      'execution_engine',
      'callable',
      'source_url',
      'runtime',
      'manifest',
    ]) {
      assert.ok(f in dl.body, f);
    }
    assert.match(dl.body.bundle.url, /^file:\/\//);
    const bytes = await readFile(fileURLToPath(dl.body.bundle.url));
    assert.ok(bytes.length > 0);
    assert.equal(
      (await p.request('GET', `/public/agents/${owner.org}/private-one/v1`, { key: null })).status,
      404,
    );
    assert.equal((await p.request('GET', `/public/agents/${owner.org}/nope/v1`, { key: null })).status, 404);
    assert.equal(
      (await p.request('GET', `/public/agents/${owner.org}/open-tool/latest`, { key: null })).status,
      400,
    );
  });

  it('forks public source-available agents (manifest and bundle) and refuses the others with the reason', async () => {
    const src = (await p.request<{ agents: Agent[] }>('GET', '/agents?name=open-tool', { key: owner.key }))
      .body.agents[0] as Agent;
    const fork = await p.request<Agent & { forked_from: string }>('POST', `/agents/${src.id}/fork`, {
      key: outsider.key,
      body: { new_name: 'my-open-tool' },
    });
    assert.equal(fork.status, 201, fork.text);
    assert.equal(fork.body.version, 'v1');
    assert.equal(fork.body.org, 'reg-outsider');
    assert.equal(fork.body.forked_from, `${owner.org}/open-tool/v1`);
    assert.equal(fork.body.bundle?.sha256, src.bundle?.sha256, 'the bundle was copied');
    const again = await p.request('POST', `/agents/${src.id}/fork`, {
      key: outsider.key,
      body: { new_name: 'my-open-tool' },
    });
    assert.equal(again.status, 409);

    const list = async (name: string) =>
      (await p.request<{ agents: Agent[] }>('GET', `/agents?name=${name}`, { key: owner.key })).body
        .agents[0] as Agent;
    const serverOnly = await p.request('POST', `/agents/${(await list('server-only')).id}/fork`, {
      key: outsider.key,
      body: {},
    });
    assert.equal(serverOnly.status, 403);
    assert.match(errorOf(serverOnly).message, /server-only/);
    const paid = await p.request('POST', `/agents/${(await list('paid')).id}/fork`, {
      key: outsider.key,
      body: {},
    });
    assert.equal(paid.status, 403);
    assert.match(errorOf(paid).message, /Paid/);
    const priv = await p.request('POST', `/agents/${(await list('private-one')).id}/fork`, {
      key: outsider.key,
      body: {},
    });
    assert.equal(priv.status, 403, 'another workspace’s private agent: the visibility check (docs/roles.md)');
  });
});
