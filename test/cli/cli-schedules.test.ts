import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

/**
 * `agenthost schedules …` as its users run it: the CLI's command tree (in this process:
 * helpers/cli-in-process.ts says why not a subprocess each) against the local platform, a prompt
 * agent on the fake LLM, alerts and webhooks on loopback only.
 */

type Schedule = {
  id: string;
  agent: string;
  agent_version: string;
  pinned: boolean;
  auto_update: boolean;
  type: string;
  cron_expression: string | null;
  timezone: string;
  input_data: Record<string, unknown>;
  provider: string | null;
  enabled: boolean;
  next_run_at: string | null;
  alert_webhook_url: string | null;
  alert_on_failure_count: number;
  max_consecutive_failures: number;
  total_runs: number;
  webhook_url?: string;
};
type Run = { run_id: string; status: string; trigger?: string; output: unknown; error: string | null };

describe('agenthost schedules against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let receiver: AlertReceiver;
  let home: string;
  let alpha: { key: string; accountId: string; workspaceId: string };
  let bravo: { key: string; accountId: string; workspaceId: string };
  let free: { key: string; accountId: string; workspaceId: string };
  const envOf = (key: string) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
  });
  const cli = (args: string[], key = alpha.key) => runCliInProcess(args, envOf(key));
  /** Runs a command that must succeed, and parses its --json answer. */
  const json = async <T>(args: string[], key = alpha.key): Promise<T> => {
    const res = await cli([...args, '--json'], key);
    assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    return JSON.parse(res.stdout) as T;
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-schedules-'));
    fake = await startFakeLlm();
    receiver = await startAlertReceiver();
    p = await startRunsPlatform(fake);
    alpha = await p.createAccount('sch-alpha', 'pro');
    bravo = await p.createAccount('sch-bravo', 'pro');
    free = await p.createAccount('sch-free', 'free');
    const published = await p.request('POST', '/agents', {
      key: alpha.key,
      body: { name: 'echo', description: 'Echoes its input.', supported_providers: ['anthropic'] },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p?.close();
    await fake?.close();
    await receiver?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('creates cron schedules with every field, lists them by pages, shows one', async () => {
    const created = await json<Schedule>([
      'schedules',
      'create',
      'sch-alpha/echo',
      '--cron',
      '0 9 * * 1',
      '--timezone',
      'Europe/Paris',
      '--input',
      '{"topic":"weekly"}',
      '--provider',
      'anthropic',
      '--alert-url',
      receiver.url,
      '--alert-after',
      '2',
      '--disable-after',
      '5',
      '--no-auto-update',
    ]);
    assert.equal(created.type, 'cron');
    assert.equal(created.agent, 'sch-alpha/echo');
    assert.equal(created.cron_expression, '0 9 * * 1');
    assert.equal(created.timezone, 'Europe/Paris');
    assert.deepEqual(created.input_data, { topic: 'weekly' });
    assert.equal(created.provider, 'anthropic');
    assert.equal(created.alert_webhook_url, receiver.url);
    assert.equal(created.alert_on_failure_count, 2);
    assert.equal(created.max_consecutive_failures, 5);
    assert.equal(created.auto_update, false);
    assert.equal(created.enabled, true);
    assert.match(created.next_run_at ?? '', /^\d{4}-\d\d-\d\dT/);

    const human = await cli(['schedules', 'create', 'sch-alpha/echo', '--cron', '*/5 * * * *', '--disabled']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^cron +\*\/5 \* \* \* \*$/m);
    assert.match(human.stdout, /^timezone +UTC$/m);
    assert.match(human.stdout, /^enabled +no$/m);
    assert.match(human.stdout, /^next run +-$/m, 'a disabled schedule has no next run');
    const second = /^id +(\S+)$/m.exec(human.stdout)?.[1] ?? assert.fail(human.stdout);

    const listed = await json<{ schedules: Schedule[]; total: number }>(['schedules', 'list']);
    assert.equal(listed.total, 2);
    assert.deepEqual(listed.schedules.map((s) => s.id).sort(), [created.id, second].sort());
    const table = await cli(['schedules', 'list']);
    assert.match(table.stdout, /^ID +AGENT +WHEN +ENABLED +NEXT RUN +LAST$/m);
    assert.match(
      table.stdout,
      new RegExp(`^${created.id} +sch-alpha/echo@v1 +0 9 \\* \\* 1 Europe/Paris +yes +\\S+Z +-$`, 'm'),
    );
    assert.match(
      table.stdout,
      new RegExp(`^${second} +sch-alpha/echo@v1 +\\*/5 \\* \\* \\* \\* UTC +no +- +-$`, 'm'),
    );
    const page = await cli(['schedules', 'list', '--limit', '1']);
    assert.equal(page.stdout.trim().split('\n').length, 2, 'a header and one row');
    assert.match(page.stderr, /\(1 of 2 shown: --offset 1 for the next page, --all for every one\)/);
    const all = await json<{ schedules: Schedule[]; total: number }>(['schedules', 'list', '--all']);
    assert.equal(all.schedules.length, 2);
    const webhooks = await cli(['schedules', 'list', '--type', 'webhook']);
    assert.equal(webhooks.code, 0, webhooks.stderr);
    assert.equal(webhooks.stdout, '');
    assert.match(webhooks.stderr, /\(no schedules\)/);

    const got = await cli(['schedules', 'get', created.id]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, new RegExp(`^id +${created.id}$`, 'm'));
    assert.match(got.stdout, /^agent +sch-alpha\/echo@v1$/m);
    assert.match(got.stdout, /^input +\{"topic":"weekly"\}$/m);
    assert.match(got.stdout, /^failures +0 in a row \(disabled at 5\)$/m);
  });

  it('updates a schedule, disables and enables it, and shows its timeline', async () => {
    const s = await json<Schedule>(['schedules', 'create', 'sch-alpha/echo', '--cron', '0 6 * * *']);
    const updated = await json<Schedule>([
      'schedules',
      'update',
      s.id,
      '--cron',
      '30 8 * * *',
      '--timezone',
      'America/New_York',
      '--input',
      '{"topic":"daily"}',
      '--pin',
      'v1',
      '--alert-url',
      receiver.url,
    ]);
    assert.equal(updated.cron_expression, '30 8 * * *');
    assert.equal(updated.timezone, 'America/New_York');
    assert.deepEqual(updated.input_data, { topic: 'daily' });
    assert.equal(updated.pinned, true);
    assert.equal(updated.auto_update, false);
    assert.equal(updated.alert_webhook_url, receiver.url);
    const cleared = await json<Schedule>(['schedules', 'update', s.id, '--no-alert-url', '--no-provider']);
    assert.equal(cleared.alert_webhook_url, null);
    assert.equal(cleared.provider, null);

    const disabled = await cli(['schedules', 'disable', s.id]);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.match(disabled.stdout, /^enabled +no$/m);
    assert.equal((await json<Schedule>(['schedules', 'get', s.id])).next_run_at, null);
    const enabled = await json<Schedule>(['schedules', 'enable', s.id]);
    assert.equal(enabled.enabled, true);
    assert.match(enabled.next_run_at ?? '', /T/);

    const events = await json<{ events: { type: string; message: string }[]; total: number }>([
      'schedules',
      'events',
      s.id,
    ]);
    assert.deepEqual(
      events.events.map((e) => e.type),
      ['enabled', 'disabled', 'updated', 'updated', 'created'],
      'newest first',
    );
    const table = await cli(['schedules', 'events', s.id, '--type', 'disabled']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^AT +TYPE +MESSAGE$/m);
    assert.equal(table.stdout.trim().split('\n').length, 2, table.stdout);
    assert.match(table.stdout, /^\S+Z +disabled +/m);
    const paged = await cli(['schedules', 'events', s.id, '--limit', '2', '--offset', '1']);
    assert.match(paged.stdout, /^\S+Z +disabled /m);
    assert.match(paged.stderr, /\(2 of 5 shown: --offset 3 for the next page/);
  });

  it('triggers a run of a prompt agent, prints it, and lists it in runs', async () => {
    const s = await json<Schedule>([
      'schedules',
      'create',
      'sch-alpha/echo',
      '--cron',
      '0 0 1 1 *',
      '--input',
      '{"topic":"scheduled"}',
    ]);
    fake.enqueue({ text: 'the digest' });
    const run = await json<Run>(['schedules', 'trigger', s.id]);
    assert.equal(run.status, 'success');
    assert.deepEqual(run.output, { text: 'the digest' });
    assert.deepEqual(JSON.parse(String(fake.calls.at(-1)?.prompt)), { topic: 'scheduled' });

    fake.enqueue({ text: 'just this once' });
    const human = await cli(['schedules', 'trigger', s.id, '--input', '{"topic":"override"}']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^status +success$/m);
    assert.match(human.stdout, /^output +\{"text":"just this once"\}$/m);
    assert.match(human.stderr, /running schedule/);
    assert.deepEqual(JSON.parse(String(fake.calls.at(-1)?.prompt)), { topic: 'override' });

    fake.enqueue({ status: 400, errorMessage: 'the model refused' });
    const failed = await cli(['schedules', 'trigger', s.id]);
    assert.equal(failed.code, 1, 'a failed run exits 1');
    assert.match(failed.stdout, /^status +error$/m);
    assert.match(failed.stdout, /^error +\S+: /m);

    const runs = await json<{ runs: Run[]; total: number }>(['schedules', 'runs', s.id]);
    assert.equal(runs.total, 3);
    assert.deepEqual(
      runs.runs.map((r) => [r.status, r.trigger]),
      [
        ['error', 'manual'],
        ['success', 'manual'],
        ['success', 'manual'],
      ],
      'newest first',
    );
    assert.equal(runs.runs[2]?.run_id, run.run_id);
    const table = await cli(['schedules', 'runs', s.id]);
    assert.match(table.stdout, /^RUN +TRIGGER +STATUS +STARTED +DURATION +ERROR$/m);
    assert.match(table.stdout, new RegExp(`^${run.run_id} +manual +success +\\S+Z +\\d+ ms +-$`, 'm'));
    const failedOnly = await json<{ runs: Run[]; total: number }>([
      'schedules',
      'runs',
      s.id,
      '--status',
      'failed',
    ]);
    assert.deepEqual(
      failedOnly.runs.map((r) => r.status),
      ['error'],
    );
    const fields = await cli(['schedules', 'runs', s.id, '--fields', 'run_id,status', '--limit', '1']);
    assert.equal(fields.code, 0, fields.stderr);
    assert.match(fields.stdout, /^RUN_ID +STATUS$/m);
    assert.match(fields.stdout, /^\S+ +error$/m);
    assert.match(fields.stderr, /\(1 of 3 shown/);
    const schedule = await json<Schedule>(['schedules', 'get', s.id]);
    assert.equal(schedule.total_runs, 3, 'manual triggers count');
  });

  it('creates a webhook trigger: the URL once, on stdout, marked; a POST to it runs the agent', async () => {
    const created = await cli([
      'schedules',
      'create',
      'sch-alpha/echo',
      '--webhook',
      '--input',
      '{"source":"default"}',
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /The webhook URL is shown once; store it now/);
    const url = created.stdout.trim();
    assert.equal(created.stdout, `${url}\n`, 'stdout is the URL alone');
    const m = new RegExp(`^${p.url}/webhooks/([0-9a-f-]{36})/(whs_[A-Za-z0-9_-]+)$`).exec(url);
    assert.ok(m, url);
    const [, id, secret] = m as unknown as [string, string, string];

    // Never shown again: not by get, list or --json of either.
    for (const args of [
      ['schedules', 'get', id],
      ['schedules', 'get', id, '--json'],
      ['schedules', 'list', '--json'],
    ]) {
      const res = await cli(args);
      assert.equal(res.code, 0, res.stderr);
      assert.ok(!res.stdout.includes(secret), `${args.join(' ')} shows no secret`);
    }
    assert.match((await cli(['schedules', 'get', id])).stdout, /^type +webhook$/m);

    fake.enqueue({ text: 'hooked' });
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event":"push"}',
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as Run).status, 'success');
    assert.deepEqual(JSON.parse(String(fake.calls.at(-1)?.prompt)), { source: 'default', event: 'push' });
    const runs = await json<{ runs: Run[] }>(['schedules', 'runs', id]);
    assert.deepEqual(
      runs.runs.map((r) => [r.trigger, r.status, r.output]),
      [['webhook', 'success', { text: 'hooked' }]],
    );

    // With --json the whole answer, URL included.
    const asJson = await json<Schedule>(['schedules', 'create', 'sch-alpha/echo', '--webhook']);
    assert.equal(asJson.type, 'webhook');
    assert.match(asJson.webhook_url ?? '', new RegExp(`^${p.url}/webhooks/${asJson.id}/whs_`));

    // Disabled, its URL answers 409 and runs nothing.
    assert.equal((await cli(['schedules', 'disable', id])).code, 0);
    assert.equal((await fetch(url, { method: 'POST' })).status, 409);
  });

  it('sends a test alert to the alert URL, and says when it was not delivered', async () => {
    const s = await json<Schedule>([
      'schedules',
      'create',
      'sch-alpha/echo',
      '--cron',
      '0 3 * * *',
      '--alert-url',
      receiver.url,
    ]);
    const before = receiver.received.length;
    const sent = await cli(['schedules', 'test-alert', s.id]);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /^delivered +yes$/m);
    assert.match(sent.stdout, /^status code +200$/m);
    const [alert] = (await receiver.waitFor(before + 1)).slice(before);
    assert.equal(alert?.body.event, 'schedule.failure_streak');
    assert.equal(alert?.body.schedule_id, s.id);
    assert.equal(alert?.body.test, true);

    receiver.answer(404);
    const refused = await cli(['schedules', 'test-alert', s.id, '--json']);
    assert.equal(refused.code, 1, 'not delivered exits 1');
    const result = JSON.parse(refused.stdout) as { delivered: boolean; status_code: number };
    assert.deepEqual([result.delivered, result.status_code], [false, 404]);

    const noUrl = await json<Schedule>(['schedules', 'create', 'sch-alpha/echo', '--cron', '0 3 * * *']);
    const none = await cli(['schedules', 'test-alert', noUrl.id]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /^agenthost: INVALID_INPUT: .*alert_webhook_url/);
  });

  it('deletes a schedule; its runs stay readable', async () => {
    const s = await json<Schedule>(['schedules', 'create', 'sch-alpha/echo', '--cron', '0 4 * * *']);
    fake.enqueue({ text: 'last' });
    assert.equal((await cli(['schedules', 'trigger', s.id])).code, 0);
    const del = await cli(['schedules', 'delete', s.id]);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stderr, new RegExp(`deleted schedule ${s.id}`));
    const gone = await cli(['schedules', 'get', s.id]);
    assert.equal(gone.code, 5, gone.stderr);
    assert.match(gone.stderr, /^agenthost: NOT_FOUND: /);
    const runs = await json<{ total: number }>(['schedules', 'runs', s.id]);
    assert.equal(runs.total, 1);
    assert.equal((await cli(['schedules', 'delete', s.id])).code, 5, 'deleting twice');
  });

  it('refuses mistakes, other tenants and missing roles with the documented exit codes, one line each', async () => {
    const s = await json<Schedule>(['schedules', 'create', 'sch-alpha/echo', '--cron', '0 5 * * *']);
    const id = s.id;
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: [string[], string, number, RegExp][] = [
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', '* * * * *', '--webhook'],
        alpha.key,
        2,
        /--cron or --webhook, not both/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo'],
        alpha.key,
        2,
        /needs --cron EXPRESSION or --webhook \(fix: /,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', 'every monday'],
        alpha.key,
        2,
        /^agenthost: INVALID_INPUT: .*cron_expression/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', '0 9 * * *', '--timezone', 'EST'],
        alpha.key,
        2,
        /INVALID_INPUT: .*timezone/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', '0 9 * * *', '--input', '{"a":'],
        alpha.key,
        2,
        /--input is not JSON/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', '0 9 * * *', '--alert-after', '0'],
        alpha.key,
        2,
        /--alert-after.*must be a whole number from 1 to 100/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/echo', '--cron', '0 9 * * *', '--provider', 'acme'],
        alpha.key,
        2,
        /Allowed choices are anthropic, openai/,
      ],
      [
        ['schedules', 'create', 'sch-alpha/nothing', '--cron', '0 9 * * *'],
        alpha.key,
        2,
        /^agenthost: INVALID_INPUT: .*sch-alpha\/nothing does not exist/,
      ],
      [['schedules', 'update', id], alpha.key, 2, /nothing to change/],
      [['schedules', 'update', id, '--pin', '3'], alpha.key, 2, /--pin 3 is not a version/],
      [
        ['schedules', 'runs', id, '--limit', 'ten'],
        alpha.key,
        2,
        /--limit.*must be a whole number from 1 to 200/,
      ],
      [
        ['schedules', 'runs', id, '--all', '--limit', '5'],
        alpha.key,
        2,
        /cannot be used with option '--limit/,
      ],
      [
        ['schedules', 'runs', id, '--status', 'ok'],
        alpha.key,
        2,
        /Allowed choices are success, error, timeout, failed/,
      ],
      [['schedules', 'get', unknown], alpha.key, 5, /^agenthost: NOT_FOUND: /],
      // A progress note comes first: the run may take a while.
      [['schedules', 'trigger', unknown], alpha.key, 5, /^agenthost: NOT_FOUND: /m],
      [['schedules', 'get', id, '-w', alpha.workspaceId], bravo.key, 5, /^agenthost: NOT_FOUND: /],
      [['schedules', 'get', id], bravo.key, 5, /^agenthost: NOT_FOUND: /],
      [
        ['schedules', 'create', 'sch-free/echo', '--cron', '0 9 * * *'],
        free.key,
        4,
        /^agenthost: FORBIDDEN: /,
      ],
      [['schedules', 'list'], 'ahk_wrong', 4, /^agenthost: UNAUTHORIZED: /],
    ];
    for (let i = 0; i < cases.length; i += 4) {
      await Promise.all(
        cases.slice(i, i + 4).map(async ([args, key, code, pattern]) => {
          const res = await cli(args, key);
          assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
          assert.match(res.stderr, pattern, args.join(' '));
          assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
          assert.equal(res.stdout, '', args.join(' '));
        }),
      );
    }
    const noKey = await runCliInProcess(['schedules', 'list'], {
      AGENTHOST_URL: p.url,
      XDG_CONFIG_HOME: join(home, 'none'),
    });
    assert.equal(noKey.code, 4);
    assert.match(
      noKey.stderr,
      /no API key for http:\/\/127\.0\.0\.1:\d+ \(fix: sign in with `agenthost login`/,
    );

    // A member of alpha's workspace reads its schedules but may not change or run them.
    await joinWorkspace(p.request, alpha.workspaceId, alpha.key, { key: bravo.key, id: bravo.accountId });
    const asMember = (args: string[]) => cli([...args, '-w', alpha.workspaceId], bravo.key);
    assert.equal((await asMember(['schedules', 'get', id])).code, 0);
    assert.equal((await asMember(['schedules', 'runs', id])).code, 0);
    for (const args of [
      ['schedules', 'delete', id],
      ['schedules', 'trigger', id],
      ['schedules', 'disable', id],
      ['schedules', 'create', 'sch-alpha/echo', '--cron', '0 9 * * *'],
    ]) {
      const res = await asMember(args);
      assert.equal(res.code, 4, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^agenthost: FORBIDDEN: .*\(fix: ask a workspace owner/m);
    }
    assert.equal((await json<Schedule>(['schedules', 'get', id])).enabled, true, 'unchanged');
  });
});
