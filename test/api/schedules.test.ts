import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Schedule = Record<string, unknown> & {
  id: string;
  next_run_at: string | null;
  agent_version: string;
  pinned: boolean;
  auto_update: boolean;
  webhook_url?: string;
};

describe('schedules: records and endpoints (end to end over HTTP)', () => {
  let p: TestPlatform;
  let owner: { key: string; ws: string };
  let member: { key: string };
  const path = () => `/workspaces/${owner.ws}/schedules`;
  const create = (body: Record<string, unknown>, key = owner.key) =>
    p.request<Schedule>('POST', path(), { key, body });

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    p.clock.set('2026-03-07T12:00:00Z');
    const o = await createAccount(p.deps, { org: 'sched', tier: 'pro' });
    const m = await createAccount(p.deps, { org: 'sched-member', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    member = { key: m.api_key };
    await joinWorkspace(p.request, owner.ws, owner.key, { key: m.api_key, id: m.account.id });
    const publish = await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'digest',
        description: 'Daily digest.',
        supported_providers: ['any'],
        prompt_template: 'hi',
      },
    });
    assert.equal(publish.status, 201, publish.text);
  });
  after(() => p.close());

  it('creates a cron schedule with the spec’s defaults and its next run in its time zone', async () => {
    const res = await create({
      agent: 'sched/digest',
      cron_expression: '30 2 * * *',
      timezone: 'America/New_York',
    });
    assert.equal(res.status, 201, res.text);
    const s = res.body;
    assert.equal(s.type, 'cron');
    assert.equal(s.agent, 'sched/digest');
    assert.equal(s.agent_version, 'v1');
    assert.equal(s.pinned, false);
    assert.equal(s.auto_update, true);
    assert.deepEqual(s.input_data, {});
    assert.equal(s.enabled, true);
    assert.equal(s.consecutive_failures, 0);
    assert.equal(s.max_consecutive_failures, 10);
    assert.equal(s.alert_on_failure_count, 3);
    assert.equal(s.total_runs, 0);
    assert.equal(s.last_run_at, null);
    // 2026-03-08 is the spring-forward day in New York: 02:30 does not exist, the run is at 03:00 EDT.
    assert.equal(s.next_run_at, '2026-03-08T07:00:00.000Z');
  });

  it('returns a webhook schedule’s URL once, and never its secret again', async () => {
    const res = await create({ agent: 'sched/digest@v1', type: 'webhook', input_data: { topic: 'news' } });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.webhook_url ?? '', new RegExp(`/webhooks/${res.body.id}/whs_[A-Za-z0-9_-]{43}$`));
    assert.equal(res.body.pinned, true);
    assert.equal(res.body.auto_update, false, 'a pinned version does not follow new ones');
    assert.equal(res.body.next_run_at, null);
    const got = await p.request<Schedule>('GET', `${path()}/${res.body.id}`, { key: member.key });
    assert.equal(got.status, 200);
    assert.equal(got.body.webhook_url, undefined);
    assert.ok(!got.text.includes('whs_'), 'no secret in later reads');
    assert.ok(!got.text.includes('webhook_secret_hash'));
  });

  it('refuses bad input naming the field', async () => {
    for (const [body, field, fragment] of [
      [{ agent: 'sched/digest', cron_expression: '0 0 9 * * 1' }, 'body.cron_expression', /five|5|fields/i],
      [{ agent: 'sched/digest', cron_expression: '61 * * * *' }, 'body.cron_expression', /minute/],
      [{ agent: 'sched/digest', cron_expression: '0 9 * * *', timezone: 'EST' }, 'body.timezone', /IANA/],
      [{ agent: 'sched/digest' }, 'body.cron_expression', /required/],
      [
        { agent: 'sched/digest', cron_expression: '0 9 * * *', max_consecutive_failures: 101 },
        'body.max_consecutive_failures',
        /1 to 100/,
      ],
      [{ agent: 'sched/nothing', cron_expression: '0 9 * * *' }, 'body.agent', /does not exist/],
      [{ agent: 'Not An Agent', cron_expression: '0 9 * * *' }, 'body.agent', /org\/agent/],
      [
        {
          agent: 'sched/digest',
          cron_expression: '0 9 * * *',
          alert_webhook_url: 'http://169.254.169.254/latest',
        },
        'body.alert_webhook_url',
        /./,
      ],
    ] as const) {
      const res = await create(body as Record<string, unknown>);
      assert.equal(res.status, 400, `${field}: ${res.text.slice(0, 200)}`);
      const err = errorOf(res);
      assert.ok(err.fields.includes(field), `${field} in ${err.fields.join(', ')}`);
      assert.match(err.message, fragment);
    }
  });

  it('lets members list and read, and only owners write; Free accounts cannot schedule', async () => {
    const list = await p.request<{ schedules: Schedule[]; total: number }>(
      'GET',
      `${path()}?type=cron&limit=1`,
      {
        key: member.key,
      },
    );
    assert.equal(list.status, 200);
    assert.equal(list.body.schedules.length, 1);
    assert.ok(list.body.total >= 1);
    const byAgent = await p.request<{ total: number }>('GET', `${path()}?agent=sched/digest`, {
      key: owner.key,
    });
    assert.ok(byAgent.body.total >= 2);
    const denied = await create({ agent: 'sched/digest', cron_expression: '0 9 * * *' }, member.key);
    assert.equal(denied.status, 403);
    const free = await createAccount(p.deps, { org: 'sched-free', tier: 'free' });
    const res = await p.request('POST', `/workspaces/${free.workspace_id}/schedules`, {
      key: free.api_key,
      body: { agent: 'sched/digest', cron_expression: '0 9 * * *' },
    });
    assert.equal(res.status, 403);
    assert.match(errorOf(res).message, /Pro, Team and Enterprise/);
  });

  it('recomputes the next run on cron or time zone changes, pins versions and resumes following', async () => {
    const s = (await create({ agent: 'sched/digest', cron_expression: '0 9 * * *' })).body;
    assert.equal(s.next_run_at, '2026-03-08T09:00:00.000Z');
    const tz = await p.request<Schedule>('PATCH', `${path()}/${s.id}`, {
      key: owner.key,
      body: { timezone: 'Europe/Berlin' },
    });
    assert.equal(tz.status, 200, tz.text);
    assert.equal(tz.body.next_run_at, '2026-03-08T08:00:00.000Z');
    const cron = await p.request<Schedule>('PATCH', `${path()}/${s.id}`, {
      key: owner.key,
      body: { cron_expression: '0 18 * * 5' },
    });
    assert.equal(cron.body.next_run_at, '2026-03-13T17:00:00.000Z');
    const disabled = await p.request<Schedule>('PATCH', `${path()}/${s.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
    assert.equal(disabled.body.next_run_at, null);

    await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'digest',
        description: 'Daily digest, v2.',
        supported_providers: ['any'],
        prompt_template: 'hi',
      },
    });
    const pinned = await p.request<Schedule>('PATCH', `${path()}/${s.id}`, {
      key: owner.key,
      body: { version: 'v1' },
    });
    assert.equal(pinned.body.agent_version, 'v1');
    assert.equal(pinned.body.pinned, true);
    assert.equal(pinned.body.auto_update, false);
    const follow = await p.request<Schedule>('PATCH', `${path()}/${s.id}`, {
      key: owner.key,
      body: { auto_update: true },
    });
    assert.equal(follow.body.auto_update, true);
    assert.equal(follow.body.pinned, false);
    assert.equal(follow.body.agent_version, 'v2');
    const memberPatch = await p.request('PATCH', `${path()}/${s.id}`, {
      key: member.key,
      body: { enabled: true },
    });
    assert.equal(memberPatch.status, 403);
    const bad = await p.request('PATCH', `${path()}/${s.id}`, { key: owner.key, body: { timezone: 'PST' } });
    assert.equal(bad.status, 400);
  });

  it('deletes a schedule (owners only)', async () => {
    const s = (await create({ agent: 'sched/digest', cron_expression: '0 9 * * *' })).body;
    assert.equal((await p.request('DELETE', `${path()}/${s.id}`, { key: member.key })).status, 403);
    assert.equal((await p.request('DELETE', `${path()}/${s.id}`, { key: owner.key })).status, 204);
    assert.equal((await p.request('GET', `${path()}/${s.id}`, { key: owner.key })).status, 404);
  });
});
