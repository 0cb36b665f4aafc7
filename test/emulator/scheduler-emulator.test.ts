/**
 * The EventBridge Scheduler emulator, through the real SchedulerClient over loopback HTTP: the
 * platform's EventBridgeScheduler adapter managing rules, AWS's error answers, firing on a fake
 * clock (once per slot, the target's Input with context attributes, time zones and DST), retries
 * then a dead letter, restart persistence, and the real timer loop.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { EventBridgeScheduler } from '../../functions/adapters/aws/eventbridge-scheduler.ts';
import {
  SchedulerEmulator,
  type SchedulerEmulatorOptions,
} from '../../functions/emulator/scheduler-emulator.ts';
import type { ScheduleTimetable } from '../../functions/ports/scheduler.ts';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const GROUP = 'agenthost-schedules';
const TARGET = {
  arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:schedule-fire`,
  roleArn: `arn:aws:iam::${ACCOUNT}:role/scheduler`,
  deadLetterArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:schedules-dlq`,
};
const ID = '0b6a4c1e-6f0e-4a53-9d1e-2f1e5f9a7c10';

interface Invocation {
  arn: string;
  input: string;
}

interface Running {
  dir: string;
  emulator: SchedulerEmulator;
  client: SchedulerClient;
  adapter: EventBridgeScheduler;
  invocations: Invocation[];
  clock: { now: Date };
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.client.destroy();
    await r.emulator.close();
    await rm(r.dir, { recursive: true, force: true });
  }
});

async function start(
  options: Partial<SchedulerEmulatorOptions> & {
    dir?: string;
    at?: string;
    fail?: (n: number) => boolean;
  } = {},
): Promise<Running> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'agenthost-scheduler-emu-')));
  const clock = { now: new Date(options.at ?? '2030-01-01T00:00:30Z') };
  const invocations: Invocation[] = [];
  const emulator = new SchedulerEmulator({
    dataDir: dir,
    region: REGION,
    accountId: ACCOUNT,
    groups: [GROUP],
    now: () => clock.now,
    retryDelayMs: () => 1000,
    invokeAsync: async (arn, input) => {
      invocations.push({ arn, input });
      if (options.fail?.(invocations.length)) throw new Error(`target down (${invocations.length})`);
    },
    ...options,
  });
  const url = await emulator.listen(0, '127.0.0.1');
  const client = new SchedulerClient({
    region: REGION,
    endpoint: url,
    credentials: { accessKeyId: 'emulated', secretAccessKey: 'emulated' },
    maxAttempts: 1,
  });
  const adapter = new EventBridgeScheduler({ client, groupName: GROUP, target: TARGET });
  const r = { dir, emulator, client, adapter, invocations, clock };
  running.push(r);
  return r;
}

const cron = (cron_expression: string, timezone = 'UTC', enabled = true): ScheduleTimetable => ({
  id: ID,
  type: 'cron',
  cron_expression,
  timezone,
  enabled,
});

/** Advances the fake clock to `iso` and fires what is due. */
async function at(r: Running, iso: string): Promise<void> {
  r.clock.now = new Date(iso);
  await r.emulator.fireDue(r.clock.now);
}

const fired = (r: Running) => r.invocations.map((i) => JSON.parse(i.input) as Record<string, unknown>);

describe('Scheduler emulator API', () => {
  it("the platform's adapter creates, updates and deletes rules; GetSchedule and ListSchedules show them", async () => {
    const r = await start();
    await r.adapter.sync(cron('30 9 * * 1-5', 'Europe/Paris'));
    const got = await r.client.send(new GetScheduleCommand({ Name: `${ID}-1`, GroupName: GROUP }));
    assert.equal(got.Arn, `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule/${GROUP}/${ID}-1`);
    assert.equal(got.ScheduleExpression, 'cron(30 9 ? * 2-6 *)');
    assert.equal(got.ScheduleExpressionTimezone, 'Europe/Paris');
    assert.equal(got.State, 'ENABLED');
    assert.deepEqual(got.FlexibleTimeWindow, { Mode: 'OFF' });
    assert.deepEqual(got.Target, {
      Arn: TARGET.arn,
      RoleArn: TARGET.roleArn,
      Input: JSON.stringify({ schedule_id: ID, scheduled_time: '<aws.scheduler.scheduled-time>' }),
      RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
      DeadLetterConfig: { Arn: TARGET.deadLetterArn },
    });
    assert.ok(got.CreationDate instanceof Date);
    assert.equal(got.CreationDate.toISOString(), '2030-01-01T00:00:30.000Z');

    // Unix OR semantics: the adapter updates rule 1 in place and creates rule 2.
    r.clock.now = new Date('2030-01-02T00:00:00Z');
    await r.adapter.sync(cron('0 12 1,15 * 1'));
    const listed = await r.client.send(new ListSchedulesCommand({ GroupName: GROUP }));
    assert.deepEqual(listed.Schedules?.map((s) => [s.Name, s.State, s.Target?.Arn]).sort(), [
      [`${ID}-1`, 'ENABLED', TARGET.arn],
      [`${ID}-2`, 'ENABLED', TARGET.arn],
    ]);
    const updated = await r.client.send(new GetScheduleCommand({ Name: `${ID}-1`, GroupName: GROUP }));
    assert.equal(updated.ScheduleExpression, 'cron(0 12 1,15 * ? *)');
    assert.equal(updated.CreationDate?.toISOString(), '2030-01-01T00:00:30.000Z');
    assert.equal(updated.LastModificationDate?.toISOString(), '2030-01-02T00:00:00.000Z');

    // Disabling deletes every rule; remove is idempotent.
    await r.adapter.sync(cron('0 12 1,15 * 1', 'UTC', false));
    await r.adapter.remove(ID);
    assert.deepEqual((await r.client.send(new ListSchedulesCommand({}))).Schedules, []);
  });

  it('answers ConflictException, ResourceNotFoundException and ValidationException as the service does', async () => {
    const r = await start();
    const input = (over: Partial<CreateScheduleInput> = {}): CreateScheduleInput => ({
      Name: 'n',
      GroupName: GROUP,
      ScheduleExpression: 'cron(0 12 * * ? *)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: TARGET.arn, RoleArn: TARGET.roleArn },
      ...over,
    });
    await r.client.send(new CreateScheduleCommand(input()));
    await assert.rejects(r.client.send(new CreateScheduleCommand(input())), (e: unknown) => {
      assert.ok(e instanceof ConflictException);
      assert.equal(e.$metadata.httpStatusCode, 409);
      assert.equal(e.message, 'Schedule n already exists.');
      return true;
    });
    for (const send of [
      () => r.client.send(new GetScheduleCommand({ Name: 'missing', GroupName: GROUP })),
      () => r.client.send(new DeleteScheduleCommand({ Name: 'missing', GroupName: GROUP })),
      () => r.client.send(new UpdateScheduleCommand(input({ Name: 'missing' }))),
      () => r.client.send(new CreateScheduleCommand(input({ Name: 'x', GroupName: 'no-such-group' }))),
      // The rule exists in its group only.
      () => r.client.send(new GetScheduleCommand({ Name: 'n' })),
    ]) {
      await assert.rejects(
        send(),
        (e: unknown) => e instanceof ResourceNotFoundException && e.$metadata.httpStatusCode === 404,
      );
    }
    for (const over of [
      { ScheduleExpression: 'cron(0 12 * * * *)' }, // both day fields given
      { ScheduleExpression: 'cron(0 12 * * ?)' }, // five fields
      { ScheduleExpression: 'cron(61 12 * * ? *)' },
      { ScheduleExpression: 'rate(1 minutes)' },
      { ScheduleExpression: 'every day' },
      { ScheduleExpressionTimezone: 'Mars/Olympus' },
      { Target: { Arn: TARGET.arn, RoleArn: TARGET.roleArn, RetryPolicy: { MaximumRetryAttempts: 186 } } },
      { State: 'PAUSED' as 'ENABLED' },
    ]) {
      await assert.rejects(
        r.client.send(new CreateScheduleCommand(input({ Name: 'v', ...over }))),
        (e: unknown) => e instanceof ValidationException && e.$metadata.httpStatusCode === 400,
        JSON.stringify(over),
      );
    }
  });

  it('answers malformed bodies and unknown routes without failing', async () => {
    const r = await start();
    const endpoint = await r.client.config.endpoint?.();
    const base = `http://${endpoint?.hostname}:${endpoint?.port}`;
    const broken = await fetch(`${base}/schedules/x`, { method: 'POST', body: '{"GroupName":' });
    assert.equal(broken.status, 400);
    assert.equal(broken.headers.get('x-amzn-errortype'), 'SerializationException');
    assert.ok(((await broken.json()) as { Message: string }).Message);
    const route = await fetch(`${base}/nothing`, { method: 'GET' });
    assert.equal(route.status, 404);
    const name = await fetch(`${base}/schedules/${'x'.repeat(65)}`, { method: 'GET' });
    assert.equal(name.headers.get('x-amzn-errortype'), 'ValidationException');
    assert.equal((await r.client.send(new ListSchedulesCommand({}))).Schedules?.length, 0);
  });
});

describe('Scheduler emulator firing', () => {
  it('a due cron fires once per slot, with the Input and its scheduled time', async () => {
    const r = await start();
    await r.adapter.sync(cron('0 12 * * *'));
    await at(r, '2030-01-01T11:59:59Z');
    assert.equal(r.invocations.length, 0);
    await at(r, '2030-01-01T12:00:00Z');
    await at(r, '2030-01-01T12:00:40Z');
    await at(r, '2030-01-01T18:00:00Z');
    assert.deepEqual(r.invocations, [
      { arn: TARGET.arn, input: JSON.stringify({ schedule_id: ID, scheduled_time: '2030-01-01T12:00:00Z' }) },
    ]);
    await at(r, '2030-01-02T12:00:05Z');
    assert.deepEqual(
      fired(r).map((e) => e.scheduled_time),
      ['2030-01-01T12:00:00Z', '2030-01-02T12:00:00Z'],
    );
    // Disabled: nothing fires.
    await r.adapter.sync(cron('0 12 * * *', 'UTC', false));
    await at(r, '2030-01-03T12:00:00Z');
    assert.equal(r.invocations.length, 2);
  });

  it('a wake after several slots fires each of them once, in order', async () => {
    const r = await start();
    await r.adapter.sync(cron('*/15 * * * *'));
    await at(r, '2030-01-01T01:00:00Z');
    assert.deepEqual(
      fired(r).map((e) => e.scheduled_time),
      ['2030-01-01T00:15:00Z', '2030-01-01T00:30:00Z', '2030-01-01T00:45:00Z', '2030-01-01T01:00:00Z'],
    );
  });

  it('fires in the schedule’s time zone across DST: a time in the spring-forward gap is skipped', async () => {
    const r = await start({ at: '2030-03-29T12:00:00Z' });
    // 02:30 in Paris: 01:30Z in winter, 00:30Z in summer; on 2030-03-31 02:30 does not exist.
    await r.adapter.sync(cron('30 2 * * *', 'Europe/Paris'));
    for (let h = 0; h < 4 * 24; h++) {
      await at(r, new Date(Date.parse('2030-03-29T12:00:00Z') + h * 3_600_000).toISOString());
    }
    assert.deepEqual(
      fired(r).map((e) => e.scheduled_time),
      ['2030-03-30T01:30:00Z', '2030-04-01T00:30:00Z', '2030-04-02T00:30:00Z'],
    );
  });

  it('a time that occurs twice on the fall-back day fires once', async () => {
    const r = await start({ at: '2030-10-26T22:00:00Z' });
    await r.adapter.sync(cron('*/30 2 * * *', 'Europe/Paris'));
    await at(r, '2030-10-27T03:00:00Z');
    // 02:00 and 02:30 local happen at 00:00Z/00:30Z (summer time) and again at 01:00Z/01:30Z.
    assert.deepEqual(
      fired(r).map((e) => e.scheduled_time),
      ['2030-10-27T00:00:00Z', '2030-10-27T00:30:00Z'],
    );
  });

  it('a failing delivery is retried per the RetryPolicy, then dead-lettered with its input', async () => {
    const r = await start({ fail: () => true });
    await r.adapter.sync(cron('0 12 * * *'));
    await at(r, '2030-01-01T12:00:00Z');
    for (let s = 1; s <= 5; s++) await at(r, `2030-01-01T12:00:0${s}Z`);
    // One attempt and three retries (FIRE_RETRY_ATTEMPTS), all with the same scheduled time.
    assert.equal(r.invocations.length, 4);
    assert.deepEqual(new Set(fired(r).map((e) => e.scheduled_time)), new Set(['2030-01-01T12:00:00Z']));
    const letters = r.emulator.deadLetters();
    assert.equal(letters.length, 1);
    assert.deepEqual(letters[0], {
      deadLetterArn: TARGET.deadLetterArn,
      body: JSON.stringify({ schedule_id: ID, scheduled_time: '2030-01-01T12:00:00Z' }),
      attributes: {
        ERROR_CODE: 'Error',
        ERROR_MESSAGE: 'target down (4)',
        EXHAUSTED_RETRY_CONDITION: 'MaximumRetryAttempts',
        RETRY_ATTEMPTS: '3',
        SCHEDULE_ARN: `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule/${GROUP}/${ID}-1`,
        TARGET_ARN: TARGET.arn,
      },
      scheduledTime: '2030-01-01T12:00:00Z',
      time: '2030-01-01T12:00:03.000Z',
    });
  });

  it('a retry that succeeds leaves no dead letter; an event past its maximum age is dead-lettered', async () => {
    const r = await start({ fail: (n) => n === 1 || n >= 3, retryDelayMs: () => 40_000 });
    await r.adapter.sync(cron('0 12 * * *'));
    await at(r, '2030-01-01T12:00:00Z');
    await at(r, '2030-01-01T12:00:40Z');
    assert.equal(r.invocations.length, 2);
    assert.deepEqual(r.emulator.deadLetters(), []);

    await r.client.send(
      new CreateScheduleCommand({
        Name: 'aged',
        GroupName: GROUP,
        ScheduleExpression: 'cron(0 13 * * ? *)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: TARGET.arn,
          RoleArn: TARGET.roleArn,
          Input: '{"attempt":"<aws.scheduler.attempt-number>","arn":"<aws.scheduler.schedule-arn>"}',
          RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 60 },
          DeadLetterConfig: { Arn: TARGET.deadLetterArn },
        },
      }),
    );
    await at(r, '2030-01-01T13:00:00Z');
    await at(r, '2030-01-01T13:00:40Z');
    await at(r, '2030-01-01T13:01:20Z');
    assert.deepEqual(
      fired(r)
        .slice(2)
        .map((e) => e.attempt),
      ['1', '2'],
    );
    assert.equal(fired(r)[2]?.arn, `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule/${GROUP}/aged`);
    assert.deepEqual(
      r.emulator
        .deadLetters()
        .map((l) => [l.attributes.EXHAUSTED_RETRY_CONDITION, l.attributes.RETRY_ATTEMPTS]),
      [['MaximumEventAgeInSeconds', '1']],
    );
  });

  it('schedules survive a restart and keep firing', async () => {
    const first = await start();
    await first.adapter.sync(cron('0 12 * * *', 'America/New_York'));
    first.client.destroy();
    await first.emulator.close();
    running.splice(running.indexOf(first), 1);

    const second = await start({ dir: first.dir, at: '2030-01-01T10:00:00Z' });
    const got = await second.client.send(new GetScheduleCommand({ Name: `${ID}-1`, GroupName: GROUP }));
    assert.equal(got.ScheduleExpression, 'cron(0 12 * * ? *)');
    assert.equal(got.ScheduleExpressionTimezone, 'America/New_York');
    await at(second, '2030-01-01T17:00:00Z');
    assert.deepEqual(
      fired(second).map((e) => e.scheduled_time),
      ['2030-01-01T17:00:00Z'],
    );
  });

  it('the timer loop fires a one-time schedule on the real clock, which then deletes itself', async () => {
    const r = await start({ now: () => new Date() });
    let delivered: (input: string) => void = () => undefined;
    const delivery = new Promise<string>((resolve) => {
      delivered = resolve;
    });
    // Replace the recording target with one that resolves the wait.
    const emulator = new SchedulerEmulator({
      dataDir: join(r.dir, 'loop'),
      groups: [GROUP],
      invokeAsync: async (_arn, input) => delivered(input),
    });
    const url = await emulator.listen(0, '127.0.0.1');
    const client = new SchedulerClient({
      region: REGION,
      endpoint: url,
      credentials: { accessKeyId: 'e', secretAccessKey: 'e' },
    });
    try {
      const when = new Date(Date.now() + 1500);
      const expr = `at(${when.toISOString().slice(0, 19)})`;
      await client.send(
        new CreateScheduleCommand({
          Name: 'once',
          ScheduleExpression: expr,
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: TARGET.arn,
            RoleArn: TARGET.roleArn,
            Input: '{"t":"<aws.scheduler.scheduled-time>"}',
          },
        }),
      );
      const input = JSON.parse(await delivery) as { t: string };
      assert.equal(input.t, `${when.toISOString().slice(0, 19)}Z`);
      await assert.rejects(client.send(new GetScheduleCommand({ Name: 'once' })), ResourceNotFoundException);
    } finally {
      client.destroy();
      await emulator.close();
    }
  });
});
