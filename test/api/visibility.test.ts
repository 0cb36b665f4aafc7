import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type ApiResponse, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * Visibility, from the attacker's side: every way of referring to an agent or skill (the
 * call path, X-Platform-Skills, X-Platform-Skills-Only, default_skills at publish and at call time,
 * manifest dependencies, fork, service and schedule deploys) goes through one visibility check.
 * Another workspace's private agent or skill is 403 FORBIDDEN (docs/roles.md), and a private
 * skill's text never reaches the model.
 */
const CANARY = 'CANARY-private-skill-text-7f3a';
const LATER_CANARY = 'CANARY-later-private-version-91c2';

describe('visibility: another workspace’s private agents and skills, however they are referenced', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let victim: { key: string; ws: string };
  let mallory: { key: string; ws: string };
  let privateToolId = '';
  let publicToolId = '';

  const skill = (name: string, body: string, isPublic: boolean) => ({
    type: 'skill',
    skill_md: `---\nname: ${name}\ndescription: ${name} skill\nis_public: ${isPublic}\n---\n${body}\n`,
  });
  const prompt = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `${name}.`,
    supported_providers: ['anthropic'],
    prompt_template: 'answer',
    ...extra,
  });
  const published = async (key: string, body: unknown) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', { key, body });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  /** Every system text the model has been sent so far. */
  const seenByModel = () => fake.calls.map((c) => c.system ?? '').join('\n');
  const forbidden = (res: ApiResponse, what: string) => {
    assert.equal(res.status, 403, `${what}: ${res.text}`);
    assert.equal(errorOf(res).code, 'FORBIDDEN');
    assert.ok(!res.text.includes('CANARY'), `${what}: the answer carries none of the skill's text`);
  };

  before(async () => {
    fake = await startFakeLlm();
    fake.setResponder(() => ({ text: 'ok' }));
    p = await startTestPlatform(
      {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const v = await p.createAccount('secretco', 'pro');
    const m = await p.createAccount('mallory', 'pro');
    victim = { key: v.key, ws: v.workspaceId };
    mallory = { key: m.key, ws: m.workspaceId };
    await published(victim.key, skill('secret-skill', CANARY, false));
    // Public at v1; its author makes v2 private later (after mallory refers to it).
    await published(victim.key, skill('evolving', 'public guidance', true));
    await published(victim.key, prompt('private-prompt', { default_skills: ['secretco/secret-skill'] }));
    privateToolId = await published(victim.key, {
      name: 'private-tool',
      type: 'tool',
      description: 'private tool',
      supported_providers: ['any'],
      runtime: { command: 'echo {}' },
      allow_local_download: true,
    });
    publicToolId = await published(victim.key, {
      name: 'open-tool',
      type: 'tool',
      description: 'public, source-available tool',
      supported_providers: ['any'],
      runtime: { command: 'echo {}' },
      is_public: true,
      allow_local_download: true,
    });
    await published(victim.key, prompt('open-prompt', { is_public: true }));
    await published(mallory.key, prompt('m-prompt'));
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('the owner’s own workspace still uses its private skill (the check refuses only others)', async () => {
    const res = await p.request('POST', '/secretco/private-prompt/v1/run', { key: victim.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.match(fake.calls.at(-1)?.system ?? '', new RegExp(CANARY));
    fake.calls.length = 0;
  });

  it('the call path: another workspace’s private agent is 403', async () => {
    forbidden(
      await p.request('POST', '/secretco/private-prompt/v1/run', { key: mallory.key, body: {} }),
      'call',
    );
    // A wrong endpoint is 404 with the agent's default_endpoint only for a caller who can see it
    // (the SDK's retry reads it); another workspace learns nothing of the agent there either.
    const elsewhere = await p.request('POST', '/secretco/private-prompt/v1/elsewhere', {
      key: mallory.key,
      body: {},
    });
    forbidden(elsewhere, 'call at another endpoint');
    assert.doesNotMatch(elsewhere.text, /default_endpoint|"run"/);
    const own = await p.request('POST', '/secretco/private-prompt/v1/elsewhere', {
      key: victim.key,
      body: {},
    });
    assert.equal(own.status, 404, own.text);
    assert.match(own.text, /"default_endpoint":"run"/);
    assert.ok(!seenByModel().includes(CANARY));
  });

  it('X-Platform-Skills and X-Platform-Skills-Only: another workspace’s private skill is 403 and its text never reaches the model', async () => {
    for (const header of ['x-platform-skills', 'x-platform-skills-only']) {
      for (const ref of ['secretco/secret-skill', 'secretco/secret-skill@v1']) {
        const res = await p.request('POST', '/mallory/m-prompt/v1/run', {
          key: mallory.key,
          body: {},
          headers: { [header]: ref },
        });
        forbidden(res, `${header}: ${ref}`);
      }
    }
    // Also on a public agent of the skill's own workspace: what counts is who names the skill.
    forbidden(
      await p.request('POST', '/secretco/open-prompt/v1/run', {
        key: mallory.key,
        body: {},
        headers: { 'x-platform-skills': 'secretco/secret-skill' },
      }),
      'header on the skill owner’s public agent',
    );
    assert.ok(!seenByModel().includes(CANARY), 'the private skill’s text reached the model');
  });

  it('default_skills at publish time (POST and PATCH): another workspace’s private skill is 403', async () => {
    forbidden(
      await p.request('POST', '/agents', {
        key: mallory.key,
        body: prompt('thief', { default_skills: ['secretco/secret-skill'] }),
      }),
      'publish with default_skills',
    );
    const mine = await p.request<{ agents: { id: string }[] }>('GET', '/agents?name=m-prompt', {
      key: mallory.key,
    });
    forbidden(
      await p.request('PATCH', `/agents/${mine.body.agents[0]?.id}`, {
        key: mallory.key,
        body: { default_skills: ['secretco/secret-skill'] },
      }),
      'patch default_skills',
    );
  });

  it('default_skills at call time: a default skill that became private is 403, its text not sent', async () => {
    const ours = await p.request('POST', '/agents', {
      key: mallory.key,
      body: prompt('borrower', { default_skills: ['secretco/evolving'] }),
    });
    assert.equal(ours.status, 201, `a public skill may be referred to: ${ours.text}`);
    await published(victim.key, skill('evolving', LATER_CANARY, false));
    const res = await p.request('POST', '/mallory/borrower/v1/run', { key: mallory.key, body: {} });
    forbidden(res, 'call with a default skill now private');
    assert.ok(!seenByModel().includes(LATER_CANARY), 'the now-private skill’s text reached the model');
  });

  it('manifest dependencies at publish time: another workspace’s private agent is 403', async () => {
    forbidden(
      await p.request('POST', '/agents?allow_no_secrets=true', {
        key: mallory.key,
        body: {
          name: 'wrapper',
          type: 'agent',
          description: 'wraps a private tool',
          supported_providers: ['anthropic'],
          custom_tools: [{ name: 'call_it', description: 'calls it', command: 'call secretco/private-tool' }],
          manifest: {
            manifest_version: 1,
            dependencies: [{ id: 'secretco/private-tool', version: 'v1' }],
            max_hops: 1,
            timeout_ms: 60_000,
          },
        },
      }),
      'publish with a private dependency',
    );
  });

  it('fork: another workspace’s private agent is 403; a fork of a public agent is private unless asked', async () => {
    forbidden(
      await p.request('POST', `/agents/${privateToolId}/fork`, {
        key: mallory.key,
        body: { new_name: 'stolen' },
      }),
      'fork of a private agent',
    );
    const fork = await p.request<{ is_public?: boolean; manifest?: { is_public: boolean } }>(
      'POST',
      `/agents/${publicToolId}/fork`,
      { key: mallory.key, body: { new_name: 'my-copy' } },
    );
    assert.equal(fork.status, 201, fork.text);
    const directory = await p.request<{ agents: { org: string; name: string }[] }>('GET', '/public/agents', {
      key: null,
    });
    const listed = (name: string) =>
      directory.body.agents.some((a) => a.org === 'mallory' && a.name === name);
    assert.equal(listed('my-copy'), false, 'the fork is private by default');
    const other = await p.createAccount('outsider', 'pro');
    forbidden(
      await p.request('POST', '/mallory/my-copy/v1/run', { key: other.key, body: {} }),
      'a stranger calling the private fork',
    );
    const open = await p.request('POST', `/agents/${publicToolId}/fork`, {
      key: mallory.key,
      body: { new_name: 'my-public-copy', is_public: true },
    });
    assert.equal(open.status, 201, open.text);
    const after = await p.request<{ agents: { org: string; name: string }[] }>('GET', '/public/agents', {
      key: null,
    });
    assert.ok(
      after.body.agents.some((a) => a.org === 'mallory' && a.name === 'my-public-copy'),
      'is_public: true makes the fork public',
    );
  });

  it('service deploy and schedule create: another workspace’s private agent is 403 (docs/services.md), not 400', async () => {
    forbidden(
      await p.request('POST', `/workspaces/${mallory.ws}/services`, {
        key: mallory.key,
        body: { agent: 'secretco/private-tool', http: false },
      }),
      'deploy',
    );
    forbidden(
      await p.request('POST', `/workspaces/${mallory.ws}/schedules`, {
        key: mallory.key,
        body: { agent: 'secretco/private-tool', cron_expression: '0 9 * * 1' },
      }),
      'schedule',
    );
  });
});
