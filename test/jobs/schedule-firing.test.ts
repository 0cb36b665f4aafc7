import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { EventBridgeScheduler, ruleInput } from '../../functions/adapters/aws/eventbridge-scheduler.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import {
  claimSlot,
  fireScheduledSlot,
  MISSED_GRACE_MS,
} from '../../functions/core/schedules/schedule-fire.ts';
import { runKeys } from '../../functions/core/schedules/schedule-run-record.ts';
import { type ScheduleLoop, startScheduleLoop } from '../../functions/jobs/local-schedule-loop.ts';
import { fire } from '../../functions/jobs/schedule-fire.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

type Schedule = { id: string; next_run_at: string | null; total_runs: number; last_status: string | null };

describe('local firing: the in-process loop over the stored schedules', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; ws: string };
  let loop: ScheduleLoop;

  const create = async (body: Record<string, unknown>) => {
    const res = await p.request<Schedule>('POST', `/workspaces/${owner.ws}/schedules`, {
      key: owner.key,
      body,
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const runsOf = async (id: string) =>
    (await queryAll(p.deps.store, { pk: runKeys.ofSchedule(id) })).map((i) => ({
      scheduled_time: i.scheduled_time as string,
      trigger: i.trigger as string,
      status: i.status as string,
    }));
  const eventsOf = async (id: string) =>
    (
      await p.request<{ events: { type: string; details: Record<string, unknown> }[] }>(
        'GET',
        `/workspaces/${owner.ws}/schedules/${id}/events?limit=200`,
        { key: owner.key },
      )
    ).body.events;
  /** Moves the fake clock in one-minute steps, letting the loop fire at each. */
  const walk = async (from: string, to: string) => {
    for (let t = Date.parse(from); t <= Date.parse(to); t += 60_000) {
      p.clock.set(new Date(t));
      await loop.tick();
    }
    await loop.idle();
  };

  before(async () => {
    fake = await startFakeLlm({ record: false });
    fake.setResponder(() => ({ text: 'tick' }));
    p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'cronco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'ticker', description: 'Ticks.', supported_providers: ['anthropic'] },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await loop?.stop();
    await p.close();
    await fake.close();
  });
  beforeEach(async () => {
    await loop?.stop();
    loop = startScheduleLoop(p.deps, { timers: false });
  });

  it('fires each due slot once, records it as a cron run for that slot, and moves the next run on', async () => {
    p.clock.set('2026-06-01T09:58:30Z');
    const s = await create({ agent: 'cronco/ticker', cron_expression: '*/5 * * * *' });
    assert.equal(s.next_run_at, '2026-06-01T10:00:00.000Z');
    await walk('2026-06-01T09:59:00Z', '2026-06-01T10:14:00Z');
    const runs = await runsOf(s.id);
    assert.deepEqual(runs.map((r) => r.scheduled_time).sort(), [
      '2026-06-01T10:00:00.000Z',
      '2026-06-01T10:05:00.000Z',
      '2026-06-01T10:10:00.000Z',
    ]);
    assert.ok(runs.every((r) => r.trigger === 'cron' && r.status === 'success'));
    const got = (
      await p.request<Schedule>('GET', `/workspaces/${owner.ws}/schedules/${s.id}`, { key: owner.key })
    ).body;
    assert.equal(got.total_runs, 3);
    assert.equal(got.next_run_at, '2026-06-01T10:15:00.000Z');
    // Ticking again at the same instant runs nothing more.
    await loop.tick();
    await loop.idle();
    assert.equal((await runsOf(s.id)).length, 3);
    await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
  });

  it('runs a 01:30 New York schedule once on the fall-back day and a 02:30 one at 03:00 on the spring-forward day', async () => {
    p.clock.set('2026-10-31T12:00:00Z');
    const fall = await create({
      agent: 'cronco/ticker',
      cron_expression: '30 1 * * *',
      timezone: 'America/New_York',
    });
    await walk('2026-11-01T04:00:00Z', '2026-11-01T08:00:00Z');
    // 01:30 EDT is 05:30Z; the repeated 01:30 (EST, 06:30Z) does not run again.
    assert.deepEqual(
      (await runsOf(fall.id)).map((r) => r.scheduled_time),
      ['2026-11-01T05:30:00.000Z'],
    );
    await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${fall.id}`, {
      key: owner.key,
      body: { enabled: false },
    });

    p.clock.set('2027-03-13T12:00:00Z');
    const spring = await create({
      agent: 'cronco/ticker',
      cron_expression: '30 2 * * *',
      timezone: 'America/New_York',
    });
    await walk('2027-03-14T05:00:00Z', '2027-03-14T09:00:00Z');
    // 02:30 does not exist on 2027-03-14 in New York; the run is at 03:00 EDT (07:00Z), once.
    assert.deepEqual(
      (await runsOf(spring.id)).map((r) => r.scheduled_time),
      ['2027-03-14T07:00:00.000Z'],
    );
    await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${spring.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
  });

  it('after downtime: records the slots missed while stopped as missed, runs none of them, and resumes', async (t) => {
    p.clock.set('2026-07-01T11:59:30Z');
    const s = await create({ agent: 'cronco/ticker', cron_expression: '*/10 * * * *' });
    await loop.stop();
    // The platform is down for 90 minutes: slots 12:00 ... 13:20 pass unseen.
    p.clock.set('2026-07-01T13:29:40Z');
    loop = startScheduleLoop(p.deps, { timers: false });
    await loop.tick();
    await loop.idle();
    const missed = (await eventsOf(s.id)).filter((e) => e.type === 'missed');
    assert.deepEqual(
      missed.map((e) => e.details.scheduled_time).sort(),
      ['12:00', '12:10', '12:20', '12:30', '12:40', '12:50', '13:00', '13:10', '13:20'].map(
        (hm) => `2026-07-01T${hm}:00.000Z`,
      ),
    );
    assert.equal((await runsOf(s.id)).length, 0, 'missed slots are not run');
    t.diagnostic(`missed while down: ${missed.length} slots recorded as missed, 0 run`);
    await walk('2026-07-01T13:30:00Z', '2026-07-01T13:30:00Z');
    assert.deepEqual(
      (await runsOf(s.id)).map((r) => r.scheduled_time),
      ['2026-07-01T13:30:00.000Z'],
    );
    // A slot reached late but within the grace period still runs.
    p.clock.set(new Date(Date.parse('2026-07-01T13:40:00Z') + MISSED_GRACE_MS - 1000));
    await loop.tick();
    await loop.idle();
    assert.equal((await runsOf(s.id)).length, 2);
    await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
  });

  it('runs each (schedule, slot) at most once, however many deliveries race for it', async (t) => {
    p.clock.set('2026-08-01T08:00:00Z');
    const s = await create({ agent: 'cronco/ticker', cron_expression: '0 * * * *' });
    const slot = '2026-08-01T09:00:00.000Z';
    p.clock.set(slot);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => fireScheduledSlot(p.deps, s.id, slot)),
    );
    const fired = outcomes.filter((o) => o.fired).length;
    t.diagnostic(`20 concurrent deliveries of one slot: ${fired} run`);
    assert.equal(fired, 1);
    assert.ok(outcomes.filter((o) => !o.fired).every((o) => !o.fired && o.reason === 'duplicate'));
    assert.equal((await runsOf(s.id)).length, 1);
    assert.equal(await claimSlot(p.deps, s.id, slot), false);
    // The fire handler drops malformed events and slots of disabled schedules.
    assert.deepEqual(await fire(p.deps, { schedule_id: s.id, scheduled_time: 'yesterday' }), {
      fired: false,
      reason: 'malformed',
    });
    await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
      key: owner.key,
      body: { enabled: false },
    });
    assert.deepEqual(await fire(p.deps, { schedule_id: s.id, scheduled_time: '2026-08-01T10:00:00Z' }), {
      fired: false,
      reason: 'disabled',
    });
  });
});

describe('local firing on the real clock', () => {
  it('fires a due slot within a second of its time, and survives a restart of the loop', async (t) => {
    const fake = await startFakeLlm({ record: false });
    fake.setResponder(() => ({ text: 'now' }));
    const p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    let offset = 0;
    (p.deps as { clock: { now(): Date } }).clock = { now: () => new Date(Date.now() + offset) };
    try {
      const o = await createAccount(p.deps, { org: 'clockco', tier: 'pro' });
      await p.request('POST', '/agents', {
        key: o.api_key,
        body: { name: 'now', description: 'Now.', supported_providers: ['anthropic'] },
      });
      // From here the clock's next whole minute is 1.5 s away: time for the loops and the schedule's
      // creation on a loaded machine (400 ms from the test's start was not), and a short wait.
      const realNow = Date.now();
      offset = Math.ceil(realNow / 60_000) * 60_000 + 120_000 - 1_500 - realNow;
      const first = startScheduleLoop(p.deps);
      await first.stop();
      // The "restarted" loop reads the same stored records.
      const loop = startScheduleLoop(p.deps);
      const created = await p.request<{ id: string; next_run_at: string }>(
        'POST',
        `/workspaces/${o.workspace_id}/schedules`,
        {
          key: o.api_key,
          body: { agent: 'clockco/now', cron_expression: '* * * * *' },
        },
      );
      assert.equal(created.status, 201, created.text);
      const slot = created.body.next_run_at;
      const until = Date.now() + 5000;
      let runs: { started_at: string; scheduled_time: string }[] = [];
      while (runs.length === 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 25));
        runs = (await queryAll(p.deps.store, { pk: runKeys.ofSchedule(created.body.id) })) as never;
      }
      await loop.stop();
      assert.equal(runs.length, 1);
      assert.equal(runs[0]?.scheduled_time, slot);
      const delay = Date.parse(runs[0]?.started_at as string) - Date.parse(slot);
      t.diagnostic(`fire delay on the real clock: ${delay} ms after the slot`);
      assert.ok(delay >= 0 && delay < 1000, `fired ${delay} ms after its slot`);
    } finally {
      await p.close();
      await fake.close();
    }
  });
});

describe('EventBridge Scheduler adapter (aws-sdk-client-mock)', () => {
  const mock = mockClient(SchedulerClient);
  const target = {
    arn: 'arn:aws:lambda:eu-west-1:123456789012:function:fire',
    roleArn: 'arn:aws:iam::123456789012:role/invoke',
    deadLetterArn: 'arn:aws:sqs:eu-west-1:123456789012:dlq',
  };
  const adapter = () =>
    new EventBridgeScheduler({
      client: new SchedulerClient({ region: 'eu-west-1' }),
      groupName: 'agenthost-schedules',
      target,
    });
  const id = '0b6a4c1e-6f0e-4a53-9d1e-2f1e5f9a7c10';
  const notFound = () =>
    new ResourceNotFoundException({ Message: 'not found', message: 'not found', $metadata: {} });
  beforeEach(() => mock.reset());

  it('creates one schedule with the exact input: six-field expression, time zone, no flexible window, retries, DLQ', async () => {
    mock.on(UpdateScheduleCommand).rejects(notFound());
    mock.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:x' });
    mock.on(DeleteScheduleCommand).rejects(notFound());
    await adapter().sync({
      id,
      type: 'cron',
      cron_expression: '30 9 * * 1-5',
      timezone: 'Europe/Paris',
      enabled: true,
    });
    const created = mock.commandCalls(CreateScheduleCommand).map((c) => c.args[0].input);
    assert.deepEqual(created, [
      {
        Name: `${id}-1`,
        GroupName: 'agenthost-schedules',
        ScheduleExpression: 'cron(30 9 ? * 2-6 *)',
        ScheduleExpressionTimezone: 'Europe/Paris',
        FlexibleTimeWindow: { Mode: 'OFF' },
        State: 'ENABLED',
        Description: `agenthost schedule ${id}`,
        Target: {
          Arn: target.arn,
          RoleArn: target.roleArn,
          Input: JSON.stringify({ schedule_id: id, scheduled_time: '<aws.scheduler.scheduled-time>' }),
          RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: target.deadLetterArn },
        },
      },
    ]);
    // The surplus second rule is deleted (idempotently).
    assert.deepEqual(
      mock.commandCalls(DeleteScheduleCommand).map((c) => c.args[0].input),
      [{ Name: `${id}-2`, GroupName: 'agenthost-schedules' }],
    );
  });

  it('writes a pair for Unix OR semantics, updating in place when the rules exist', async () => {
    mock.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:x' });
    await adapter().sync({
      id,
      type: 'cron',
      cron_expression: '0 12 1,15 * 1',
      timezone: 'UTC',
      enabled: true,
    });
    assert.deepEqual(
      mock
        .commandCalls(UpdateScheduleCommand)
        .map((c) => [c.args[0].input.Name, c.args[0].input.ScheduleExpression]),
      [
        [`${id}-1`, 'cron(0 12 1,15 * ? *)'],
        [`${id}-2`, 'cron(0 12 ? * 2 *)'],
      ],
    );
    assert.equal(mock.commandCalls(CreateScheduleCommand).length, 0);
    assert.equal(mock.commandCalls(DeleteScheduleCommand).length, 0);
    assert.deepEqual(
      ruleInput(
        { groupName: 'g', target },
        { id, type: 'cron', cron_expression: 'x', timezone: 'UTC', enabled: true },
        'cron(0 0 * * ? *)',
        2,
      ).Name,
      `${id}-2`,
    );
  });

  it('deletes every rule of a disabled or webhook schedule, and on remove; a missing rule is not an error', async () => {
    mock.on(DeleteScheduleCommand).rejects(notFound());
    await adapter().sync({ id, type: 'cron', cron_expression: '* * * * *', timezone: 'UTC', enabled: false });
    await adapter().sync({ id, type: 'webhook', cron_expression: null, timezone: 'UTC', enabled: true });
    await adapter().remove(id);
    assert.equal(mock.commandCalls(DeleteScheduleCommand).length, 6);
    assert.equal(
      mock.commandCalls(CreateScheduleCommand).length + mock.commandCalls(UpdateScheduleCommand).length,
      0,
    );
  });

  it('without a target (the fire function) it may only remove, and says so', async () => {
    const removeOnly = new EventBridgeScheduler({
      client: new SchedulerClient({ region: 'eu-west-1' }),
      groupName: 'g',
    });
    mock.on(DeleteScheduleCommand).resolves({});
    await removeOnly.sync({
      id,
      type: 'cron',
      cron_expression: '* * * * *',
      timezone: 'UTC',
      enabled: false,
    });
    await assert.rejects(
      removeOnly.sync({ id, type: 'cron', cron_expression: '* * * * *', timezone: 'UTC', enabled: true }),
      /only remove/,
    );
  });
});

describe('local firing: a run longer than the interval', () => {
  it('does not skip the slot that came due while the previous run was still going', async () => {
    const fake = await startFakeLlm({ record: false });
    const p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    try {
      const o = await createAccount(p.deps, { org: 'slowco', tier: 'pro' });
      await p.request('POST', '/agents', {
        key: o.api_key,
        body: { name: 'slow', description: 'Slow.', supported_providers: ['anthropic'] },
      });
      p.clock.set('2026-09-01T10:00:30Z');
      const created = await p.request<{ id: string }>('POST', `/workspaces/${o.workspace_id}/schedules`, {
        key: o.api_key,
        body: { agent: 'slowco/slow', cron_expression: '* * * * *' },
      });
      const loop = startScheduleLoop(p.deps, { timers: false });
      // The 10:01 run takes 90 s of (fake) time: the clock moves past 10:02 while it runs.
      fake.setResponder(() => {
        p.clock.set('2026-09-01T10:02:20Z');
        return { text: 'slow' };
      });
      p.clock.set('2026-09-01T10:01:00Z');
      await loop.tick();
      await loop.idle();
      fake.setResponder(() => ({ text: 'quick' }));
      await loop.tick();
      await loop.idle();
      await loop.stop();
      const slots = (await queryAll(p.deps.store, { pk: runKeys.ofSchedule(created.body.id) }))
        .map((r) => r.scheduled_time)
        .sort();
      assert.deepEqual(slots, ['2026-09-01T10:01:00.000Z', '2026-09-01T10:02:00.000Z']);
    } finally {
      await p.close();
      await fake.close();
    }
  });
});
