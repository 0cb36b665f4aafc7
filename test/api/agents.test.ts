import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import { packDirectory } from '../../functions/cli/pack.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import { BUNDLE_LIMITS } from '../../functions/shared/bundle-limits.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Agent = Record<string, unknown> & {
  id: string;
  version: string;
  status: string;
  deprecated_at: string | null;
  sunset_at: string | null;
  bundle: { sha256: string; size_bytes: number; format: string } | null;
};

const prompt = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `the ${name} agent`,
  supported_providers: ['any'],
  prompt_template: 'Summarise {{text}}',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  ...extra,
});

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'tool',
  description: `the ${name} tool`,
  supported_providers: ['any'],
  runtime: { command: 'node index.js' },
  required_secrets: ['API_TOKEN'],
  ...extra,
});

async function tarball(files: Record<string, string>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bundle-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const { data } = await packDirectory(dir);
  await rm(dir, { recursive: true, force: true });
  return data;
}

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
  let owner: { key: string; id: string; ws: string; org: string };
  let member: { key: string };
  let outsider: { key: string };
  const DAY = 86_400_000;

  const publish = (body: unknown, key = owner.key, query = '') =>
    p.request<Agent & { warnings?: { code: string; field?: string }[] }>('POST', `/agents${query}`, {
      key,
      body,
    });

  // On a socket: in memory, 2 of the 12 concurrent publishes below answer 409 (twice in two runs):
  // the 12 land at once and publish.ts tries 10 times (MAX_PUBLISH_ATTEMPTS), one winner a round;
  // a socket spaces them out. This test wants every one to get its own version.
  before(async () => {
    p = await startTestPlatform();
    const o = await createAccount(p.deps, { org: 'reg-owner', tier: 'pro' });
    const m = await createAccount(p.deps, { org: 'reg-member', tier: 'pro' });
    const x = await createAccount(p.deps, { org: 'reg-outsider', tier: 'pro' });
    owner = { key: o.api_key, id: o.account.id, ws: o.workspace_id, org: 'reg-owner' };
    member = { key: m.api_key };
    outsider = { key: x.api_key };
    await joinWorkspace(p.request, owner.ws, owner.key, { key: m.api_key, id: m.account.id });
  });
  after(() => p.close());

  it('a public agent’s id (listed so it can be forked) opens no owner route to an unauthenticated client or another account', async () => {
    const published = await publish(prompt('id-exposed', { is_public: true }));
    assert.equal(published.status, 201, published.text);
    const listed = await p.request<{ agents: { id: string; name: string }[] }>('GET', '/public/agents', {
      key: null,
    });
    const id = listed.body.agents.find((a) => a.name === 'id-exposed')?.id;
    assert.equal(id, published.body.id, 'the directory lists the version’s id');
    for (const key of [outsider.key, null]) {
      const expected = key ? 404 : 401;
      const attempts: [string, string, unknown][] = [
        ['GET', `/agents/${id}`, undefined],
        ['GET', `/agents/${id}/logs`, undefined],
        ['GET', `/agents/${id}/delete-check`, undefined],
        ['PATCH', `/agents/${id}`, { description: 'taken over' }],
        ['DELETE', `/agents/${id}`, undefined],
      ];
      for (const [method, path, body] of attempts) {
        const res: { status: number; text: string } = await p.request(method, path, {
          key,
          ...(body ? { body } : {}),
        });
        assert.equal(
          res.status,
          expected,
          `${method} ${path} as ${key ? 'another account' : 'nobody'}: ${res.text}`,
        );
      }
      const upload = await p.request('POST', `/agents/${id}/upload`, {
        key,
        rawBody: Buffer.from('not a bundle'),
        headers: { 'content-type': 'application/gzip' },
      });
      assert.ok([401, 404].includes(upload.status), `upload: ${upload.status} ${upload.text}`);
      assert.notEqual(upload.status, 200);
    }
    const still = await p.request<{ description: string; deleted_at: string | null }>(
      'GET',
      `/agents/${id}`,
      {
        key: owner.key,
      },
    );
    assert.equal(still.status, 200);
    assert.equal(still.body.deleted_at, null);
    assert.notEqual(still.body.description, 'taken over');
  });

  it('publishes v1, v2, … with the canonical fields; older versions are deprecated with a sunset 60 days on', async () => {
    const v1 = await publish(prompt('summarise'));
    assert.equal(v1.status, 201, v1.text);
    assert.equal(v1.body.version, 'v1');
    assert.equal(v1.body.type, 'prompt');
    assert.equal(v1.body.execution_engine, 'direct_llm');
    assert.equal(v1.body.run_mode, 'on_demand');
    assert.equal(v1.body.callable, true);
    assert.equal(v1.body.org, owner.org);
    assert.equal(v1.body.status, 'active');

    p.clock.advance(1000);
    const v2 = await publish(prompt('summarise', { description: 'better' }));
    assert.equal(v2.body.version, 'v2');
    assert.notEqual(v2.body.id, v1.body.id, 'each version has its own id');

    const old = await p.request<Agent>('GET', `/agents/${v1.body.id}`, { key: owner.key });
    assert.equal(old.body.status, 'deprecated');
    assert.equal(old.body.deprecated_at, p.clock.now().toISOString());
    assert.equal(
      Date.parse(old.body.sunset_at as string) - Date.parse(old.body.deprecated_at as string),
      60 * DAY,
    );
    const current = await p.request<Agent>('GET', `/agents/${v2.body.id}`, { key: member.key });
    assert.equal(current.status, 200, 'members may read');
    assert.equal(current.body.status, 'active');

    const publicFirst = await publish(prompt('dated', { is_public: true }));
    await publish(prompt('dated', { is_public: true }));
    assert.equal((await p.request('GET', `/public/agents/${owner.org}/dated/v1`, { key: null })).status, 200);
    p.clock.advance(61 * DAY);
    const sunset = await p.request<Agent>('GET', `/agents/${publicFirst.body.id}`, { key: owner.key });
    assert.equal(sunset.body.status, 'sunset', 'past its sunset a version is no longer callable');
    assert.equal((await p.request('GET', `/public/agents/${owner.org}/dated/v1`, { key: null })).status, 404);
    assert.equal((await p.request('GET', `/public/agents/${owner.org}/dated/v2`, { key: null })).status, 200);
  });

  it('assigns distinct versions to concurrent publishes', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => publish(prompt('racer'))));
    assert.ok(
      results.every((r) => r.status === 201),
      results.map((r) => r.status).join(','),
    );
    const versions = results.map((r) => Number(r.body.version.slice(1))).sort((a, b) => a - b);
    assert.deepEqual(
      versions,
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    const list = await p.request<{ agents: Agent[] }>('GET', '/agents?name=racer', { key: owner.key });
    assert.equal(
      list.body.agents.filter((a) => a.status === 'active').length,
      1,
      'only the newest is active',
    );
  });

  it('normalises legacy types, warns about the singular model field and validates every rule with a 400', async () => {
    const legacy = await publish({ ...tool('legacy'), type: 'code', model: 'gpt-4' });
    assert.equal(legacy.status, 201, legacy.text);
    assert.equal(legacy.body.type, 'tool');
    assert.equal(legacy.body.execution_engine, 'code_runtime');
    assert.deepEqual(
      legacy.body.warnings?.map((w) => [w.code, w.field]),
      [['DEPRECATED_FIELD', 'model']],
    );
    assert.equal('model' in legacy.body, false);

    const cases: [unknown, string, string][] = [
      [{ ...tool('both'), loop: { max_turns: 5 } }, 'body.runtime', 'mutually exclusive'],
      [tool('nosecrets', { required_secrets: [] }), 'body.required_secrets', ''],
      [
        tool('svc', { required_secrets: ['PLATFORM_SERVICE_KEY'] }),
        'body.required_secrets.0',
        'PLATFORM_SERVICE_KEY',
      ],
      [prompt('Bad Name'), 'body.name', ''],
      [
        { ...prompt('agentp'), type: 'agent', supported_providers: ['openai'] },
        'body.supported_providers',
        '',
      ],
      [prompt('always', { run_mode: 'always_on' }), 'body.run_mode', ''],
      [
        { ...prompt('turns'), type: 'agent', supported_providers: ['anthropic'], loop: { max_turns: 51 } },
        'body.loop.max_turns',
        '',
      ],
      [prompt('schema', { input_schema: { type: 'nonsense' } }), 'body.input_schema', ''],
      [
        prompt('dep', {
          type: 'agent',
          supported_providers: ['anthropic'],
          manifest: {
            manifest_version: 1,
            dependencies: [{ id: 'reg-owner/summarise', version: '^v1' }],
            max_hops: 1,
            timeout_ms: 1000,
          },
        }),
        'body.manifest.dependencies.0.version',
        '',
      ],
      [[1, 2], 'body', ''],
    ];
    for (const [body, field, fragment] of cases) {
      const res = await publish(body);
      assert.equal(res.status, 400, `${field}: ${res.text.slice(0, 300)}`);
      const err = errorOf(res);
      assert.equal(err.code, 'INVALID_INPUT');
      assert.ok(
        err.fields.some((f) => f.startsWith(field)),
        `${field} named in ${err.fields.join(', ')}`,
      );
      if (fragment) assert.match(err.message, new RegExp(fragment));
    }
    const bypass = await publish(
      tool('nosecrets', { required_secrets: [] }),
      owner.key,
      '?allow_no_secrets=true',
    );
    assert.equal(bypass.status, 201, 'the documented bypass flag');
  });

  it('checks dependencies (exist, pinned, no cycle) and default skills at publish', async () => {
    const orchestrator = (name: string, dep: string, version: string) => ({
      name,
      type: 'agent',
      description: 'orchestrates',
      supported_providers: ['anthropic'],
      required_secrets: ['API_TOKEN'],
      custom_tools: [
        {
          name: 'call_dep',
          description: 'calls the dependency',
          command: `agenthost call ${dep}/${version}`,
        },
      ],
      manifest: {
        manifest_version: 1,
        dependencies: [{ id: dep, version }],
        max_hops: 2,
        timeout_ms: 60_000,
      },
    });
    const missing = await publish(orchestrator('orch', 'reg-owner/nothing-here', 'v1'));
    assert.equal(missing.status, 400);
    assert.match(errorOf(missing).message, /does not exist/);

    const leaf = await publish(orchestrator('alpha', 'reg-owner/summarise', 'v1'));
    assert.equal(leaf.status, 201, leaf.text);
    const mid = await publish(orchestrator('beta', 'reg-owner/alpha', 'v1'));
    assert.equal(mid.status, 201, mid.text);
    const cycle = await publish(orchestrator('alpha', 'reg-owner/beta', 'v1'));
    assert.equal(cycle.status, 400);
    assert.match(
      errorOf(cycle).message,
      /dependency cycle: reg-owner\/alpha -> reg-owner\/beta -> reg-owner\/alpha/,
    );

    const noSkill = await publish(prompt('skilled', { default_skills: ['reg-owner/tone'] }));
    assert.equal(noSkill.status, 400);
    assert.ok(errorOf(noSkill).fields.includes('body.default_skills.0'));
    const skill = await publish({
      type: 'skill',
      skill_md: '---\nname: tone\ndescription: Write in a friendly tone\n---\nAlways be kind and brief.\n',
    });
    assert.equal(skill.status, 201, skill.text);
    assert.equal(skill.body.type, 'skill');
    assert.deepEqual(Object.keys(skill.body.skill_files as object), ['SKILL.md']);
    for (const ref of ['reg-owner/tone', 'reg-owner/tone@v1']) {
      const ok = await publish(prompt('skilled', { default_skills: [ref] }));
      assert.equal(ok.status, 201, `${ref}: ${ok.text}`);
    }
    const badSkill = await publish({ type: 'skill', skill_md: '---\nname: x\n---\nbody' });
    assert.equal(badSkill.status, 400);
    assert.ok(errorOf(badSkill).fields.some((f) => f.startsWith('body.skill_md.')));
  });

  it('patches mutable fields and refuses the ones that need a new version', async () => {
    const a = (await publish(prompt('patchy', { skills_locked: true }))).body;
    const ok = await p.request<Agent>('PATCH', `/agents/${a.id}`, {
      key: owner.key,
      body: { description: 'now clearer', tags: ['nlp'] },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.description, 'now clearer');
    assert.deepEqual(ok.body.tags, ['nlp']);
    assert.equal(ok.body.version, 'v1', 'a patch keeps the version');
    for (const [body, field] of [
      [{ run_mode: 'always_on' }, 'body.run_mode'],
      [{ runtime: { command: 'x' } }, 'body.runtime'],
      [{ loop: { max_turns: 3 } }, 'body.loop'],
      [{ callable: false }, 'body.callable'],
      [{ default_skills: ['reg-owner/tone'] }, 'body.default_skills'],
      [{ timeout_seconds: 999 }, 'body.timeout_seconds'],
    ] as const) {
      const res = await p.request('PATCH', `/agents/${a.id}`, { key: owner.key, body });
      assert.equal(res.status, 400, `${field}: ${res.text.slice(0, 200)}`);
      assert.ok(errorOf(res).fields.includes(field), `${field} in ${errorOf(res).fields.join(',')}`);
    }
    const immutable = await p.request('PATCH', `/agents/${a.id}`, {
      key: owner.key,
      body: { run_mode: 'always_on' },
    });
    assert.match(errorOf(immutable).message, /publish a new version/);
    const byMember = await p.request('PATCH', `/agents/${a.id}`, {
      key: member.key,
      body: { description: 'x' },
    });
    assert.equal(byMember.status, 403);
    const byOutsider = await p.request('PATCH', `/agents/${a.id}`, {
      key: outsider.key,
      body: { description: 'x' },
    });
    assert.equal(byOutsider.status, 404);
  });

  it('uploads code bundles with type, size and path checks', async () => {
    const t = (await publish(tool('bundled'))).body;
    const data = await tarball({ 'index.js': 'console.log(JSON.stringify({ ok: true }))\n' });
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

  it('serves the public directory: listing with filters, details and downloads by kind of agent', async () => {
    const open = (
      await publish(tool('open-tool', { is_public: true, allow_local_download: true, tags: ['files'] }))
    ).body;
    await p.request('POST', `/agents/${open.id}/upload`, {
      key: owner.key,
      rawBody: await tarball({ 'index.js': 'console.log("{}")\n' }),
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

  it('soft-deletes versions, guards pinned ones, tells what deletion needs, and purges after 30 days', async () => {
    const base = (await publish(prompt('base-lib'))).body;
    const user = await publish({
      name: 'base-user',
      type: 'agent',
      description: 'uses base-lib',
      supported_providers: ['anthropic'],
      required_secrets: ['API_TOKEN'],
      custom_tools: [
        { name: 'base', description: 'calls base-lib', command: 'agenthost call reg-owner/base-lib/v1' },
      ],
      manifest: {
        manifest_version: 1,
        dependencies: [{ id: 'reg-owner/base-lib', version: 'v1' }],
        max_hops: 1,
        timeout_ms: 1000,
      },
    });
    assert.equal(user.status, 201, user.text);
    const check = await p.request<Record<string, unknown> & { dependents: string[]; confirmation: string }>(
      'GET',
      `/agents/${base.id}/delete-check`,
      { key: member.key },
    );
    assert.equal(check.status, 200);
    assert.deepEqual(check.body.dependents, [`${owner.org}/base-user/v1`]);
    assert.equal(check.body.confirmation, 'force=true');
    assert.deepEqual(check.body.schedules, []);
    assert.deepEqual(check.body.services, []);

    const blocked = await p.request('DELETE', `/agents/${base.id}`, { key: owner.key });
    assert.equal(blocked.status, 409);
    assert.match(errorOf(blocked).message, /force=true/);
    assert.equal((await p.request('DELETE', `/agents/${base.id}`, { key: member.key })).status, 403);
    const forced = await p.request('DELETE', `/agents/${base.id}?force=true`, { key: owner.key });
    assert.equal(forced.status, 204);
    assert.equal((await p.request('GET', `/agents/${base.id}`, { key: owner.key })).status, 404);
    const listed = await p.request<{ agents: Agent[] }>('GET', '/agents?name=base-lib', { key: owner.key });
    assert.equal(listed.body.agents.length, 0);

    const multi = (await publish(prompt('multi', { is_public: true }))).body;
    await publish(prompt('multi', { is_public: true }));
    const all = await p.request('DELETE', `/agents/${multi.id}?mode=all_versions`, { key: owner.key });
    assert.equal(all.status, 204);
    assert.equal(
      (await p.request<{ agents: Agent[] }>('GET', '/agents?name=multi', { key: owner.key })).body.agents
        .length,
      0,
    );
    assert.equal((await p.request('GET', `/public/agents/${owner.org}/multi/v2`, { key: null })).status, 404);
    const names = (
      await p.request<{ agents: { name: string }[] }>('GET', '/public/agents', { key: null })
    ).body.agents.map((a) => a.name);
    assert.ok(!names.includes('multi'));

    const item = await p.deps.store.get(agentKeys.version(multi.id));
    assert.equal(typeof item?.ttl, 'number', 'a purge time is set');
    p.clock.advance(31 * DAY);
    assert.equal(await p.deps.store.get(agentKeys.version(multi.id)), undefined, 'purged after 30 days');
    const next = await publish(prompt('multi'));
    assert.equal(next.body.version, 'v3', 'version numbers are never reused');
  });

  it('lists the caller’s agents only, and shows logs to owners only', async () => {
    const mine = await p.request<{ agents: Agent[]; total: number }>('GET', '/agents', { key: outsider.key });
    assert.ok(mine.body.agents.every((a) => a.org === 'reg-outsider'));
    const some = (await publish(prompt('logged'))).body;
    const logs = await p.request<{ logs: unknown[] }>('GET', `/agents/${some.id}/logs`, { key: owner.key });
    assert.equal(logs.status, 200);
    assert.deepEqual(logs.body.logs, []);
    assert.equal((await p.request('GET', `/agents/${some.id}/logs`, { key: member.key })).status, 403);
    assert.equal((await p.request('GET', `/agents/${some.id}/logs`, { key: outsider.key })).status, 404);
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
