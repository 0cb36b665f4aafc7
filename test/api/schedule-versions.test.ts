import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Schedule = { id: string; agent_version: string; pinned: boolean; auto_update: boolean };
type Events = { events: { type: string; message: string; details: Record<string, unknown> }[] };

describe('schedules follow new versions (auto_update) within the publishing workspace', () => {
  let p: TestPlatform;
  let owner: { key: string; ws: string };
  let other: { key: string; ws: string };
  const manifest = (description: string) => ({
    name: 'report',
    description,
    supported_providers: ['any'],
    prompt_template: 'Report',
    is_public: true,
  });
  const schedule = async (who: { key: string; ws: string }, body: Record<string, unknown>) => {
    const res = await p.request<Schedule>('POST', `/workspaces/${who.ws}/schedules`, { key: who.key, body });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const get = async (who: { key: string; ws: string }, id: string) =>
    (await p.request<Schedule>('GET', `/workspaces/${who.ws}/schedules/${id}`, { key: who.key })).body;
  const events = async (who: { key: string; ws: string }, id: string) =>
    (
      await p.request<Events>('GET', `/workspaces/${who.ws}/schedules/${id}/events?type=version_updated`, {
        key: who.key,
      })
    ).body.events;

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'verco', tier: 'pro' });
    const x = await createAccount(p.deps, { org: 'elsewhere', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    other = { key: x.api_key, ws: x.workspace_id };
    const v1 = await p.request('POST', '/agents', { key: owner.key, body: manifest('Version one.') });
    assert.equal(v1.status, 201, v1.text);
  });
  after(() => p.close());

  it('moves every enabled auto_update schedule of the agent on publish, with a version_updated event naming both versions', async () => {
    const following = await schedule(owner, { agent: 'verco/report', cron_expression: '0 8 * * *' });
    const webhook = await schedule(owner, { agent: 'verco/report', type: 'webhook' });
    const pinned = await schedule(owner, { agent: 'verco/report@v1', cron_expression: '0 8 * * *' });
    const optedOut = await schedule(owner, {
      agent: 'verco/report',
      cron_expression: '0 8 * * *',
      auto_update: false,
    });
    const disabled = await schedule(owner, {
      agent: 'verco/report',
      cron_expression: '0 8 * * *',
      enabled: false,
    });
    // Another workspace's schedule of the same public agent: not moved by this workspace's publish.
    const foreign = await schedule(other, { agent: 'verco/report', cron_expression: '0 8 * * *' });
    assert.equal(pinned.pinned, true);
    assert.equal(pinned.auto_update, false);

    const v2 = await p.request('POST', '/agents', { key: owner.key, body: manifest('Version two.') });
    assert.equal(v2.status, 201, v2.text);

    for (const s of [following, webhook]) {
      assert.equal((await get(owner, s.id)).agent_version, 'v2');
      const [e] = await events(owner, s.id);
      assert.match(e?.message ?? '', /v1 to v2/);
      assert.deepEqual(e?.details, { old_version: 'v1', new_version: 'v2' });
    }
    for (const s of [pinned, optedOut, disabled]) {
      assert.equal((await get(owner, s.id)).agent_version, 'v1');
      assert.deepEqual(await events(owner, s.id), []);
    }
    assert.equal((await get(other, foreign.id)).agent_version, 'v1');
  });

  it('an explicit version pins and turns auto_update off; turning it on follows the newest again', async () => {
    const s = await schedule(owner, { agent: 'verco/report', cron_expression: '0 9 * * *' });
    const pin = await p.request<Schedule>('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
      key: owner.key,
      body: { version: 'v1' },
    });
    assert.equal(pin.status, 200, pin.text);
    assert.deepEqual([pin.body.agent_version, pin.body.pinned, pin.body.auto_update], ['v1', true, false]);
    const [pinEvent] = await events(owner, s.id);
    assert.match(pinEvent?.message ?? '', /from v2 to v1/);
    await p.request('POST', '/agents', { key: owner.key, body: manifest('Version three.') });
    assert.equal((await get(owner, s.id)).agent_version, 'v1', 'pinned: stays');
    const follow = await p.request<Schedule>('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
      key: owner.key,
      body: { auto_update: true },
    });
    assert.deepEqual(
      [follow.body.agent_version, follow.body.pinned, follow.body.auto_update],
      ['v3', false, true],
    );
    await p.request('POST', '/agents', { key: owner.key, body: manifest('Version four.') });
    assert.equal((await get(owner, s.id)).agent_version, 'v4');
  });
});

describe('delete-check names the schedules that run a version', () => {
  it('lists them, and deleting that version then needs force=true', async () => {
    const p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    try {
      const o = await createAccount(p.deps, { org: 'delco', tier: 'pro' });
      const pub = await p.request<{ id: string }>('POST', '/agents', {
        key: o.api_key,
        body: { name: 'job', description: 'A job.', supported_providers: ['any'], prompt_template: 'Go' },
      });
      const s = await p.request<{ id: string }>('POST', `/workspaces/${o.workspace_id}/schedules`, {
        key: o.api_key,
        body: { agent: 'delco/job@v1', cron_expression: '0 6 * * *' },
      });
      const check = await p.request<{ schedules: string[]; can_delete: boolean; confirmation: string }>(
        'GET',
        `/agents/${pub.body.id}/delete-check`,
        { key: o.api_key },
      );
      assert.deepEqual(check.body.schedules, [s.body.id]);
      assert.deepEqual([check.body.can_delete, check.body.confirmation], [false, 'force=true']);
      const refused = await p.request('DELETE', `/agents/${pub.body.id}`, { key: o.api_key });
      assert.equal(refused.status, 409);
      assert.match(JSON.stringify(refused.body), /schedule/);
      const forced = await p.request('DELETE', `/agents/${pub.body.id}?force=true`, { key: o.api_key });
      assert.equal(forced.status, 204, forced.text);
    } finally {
      await p.close();
    }
  });
});
