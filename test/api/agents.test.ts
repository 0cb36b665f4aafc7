/**
 * The agent registry over HTTP: publishing versions, the manifest's rules at publish, patches,
 * soft deletion and purging, and who sees what. The public directory and forks are in
 * agent-directory.test.ts; code bundles in agent-bundles.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { type Agent, prompt, type Registry, startRegistry, tool } from '../helpers/registry.ts';

describe('agent registry (end to end over HTTP)', () => {
  let p: TestPlatform;
  let owner: Registry['owner'];
  let member: Registry['member'];
  let outsider: Registry['outsider'];
  let publish: Registry['publish'];
  const DAY = 86_400_000;

  before(async () => {
    ({ p, owner, member, outsider, publish } = await startRegistry());
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
