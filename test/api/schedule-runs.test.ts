import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { deliverAlert } from '../../functions/adapters/outbound/alert-delivery.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { BACKENDS, errorOf, type TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

type Run = {
  run_id: string;
  status: string;
  duration_ms: number;
  output: Record<string, unknown> | null;
  error: string | null;
  deduplicated: boolean;
};
type Schedule = Record<string, unknown> & {
  id: string;
  enabled: boolean;
  auto_disabled: boolean;
  consecutive_failures: number;
  total_runs: number;
  last_status: string | null;
  last_run_at: string | null;
  agent_version: string;
  webhook_url?: string;
};

for (const backend of BACKENDS) {
  describe(`schedule runs: trigger, run history, failure streaks and alerts (${backend} store)`, () => {
    let p: TestPlatform;
    let fake: FakeLlmProviders;
    let receiver: AlertReceiver;
    let owner: { key: string; ws: string };
    let member: { key: string };
    const base = () => `/workspaces/${owner.ws}/schedules`;
    const create = async (body: Record<string, unknown>) => {
      const res = await p.request<Schedule>('POST', base(), { key: owner.key, body });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    const trigger = (id: string, body: unknown = {}) =>
      p.request<Run>('POST', `${base()}/${id}/trigger`, { key: owner.key, body });
    const get = async (id: string) =>
      (await p.request<Schedule>('GET', `${base()}/${id}`, { key: owner.key })).body;

    before(async () => {
      fake = await startFakeLlm();
      receiver = await startAlertReceiver();
      p = await startRunsPlatform(fake, backend, {}, { inMemory: true });
      const o = await createAccount(p.deps, { org: 'runco', tier: 'pro' });
      const m = await createAccount(p.deps, { org: 'runco-member', tier: 'pro' });
      owner = { key: o.api_key, ws: o.workspace_id };
      member = { key: m.api_key };
      await joinWorkspace(p.request, owner.ws, owner.key, { key: m.api_key, id: m.account.id });
      const published = await p.request('POST', '/agents', {
        key: owner.key,
        body: {
          name: 'digest',
          description: 'Daily digest.',
          supported_providers: ['anthropic'],
          prompt_template: 'Digest of {{topic}}',
          input_schema: { type: 'object', properties: { topic: { type: 'string' } } },
        },
      });
      assert.equal(published.status, 201, published.text);
    });
    after(async () => {
      await p.close();
      await fake.close();
      await receiver.close();
    });
    beforeEach(() => {
      fake.reset();
      receiver.received.length = 0;
    });

    it('triggers a run now and answers the spec’s Run object; the record counts it', async () => {
      const s = await create({
        agent: 'runco/digest',
        cron_expression: '0 9 * * *',
        input_data: { topic: 'news' },
      });
      fake.enqueue({ text: 'the digest' });
      const res = await trigger(s.id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'deduplicated',
        'duration_ms',
        'error',
        'metadata',
        'output',
        'run_id',
        'status',
      ]);
      assert.equal(res.body.status, 'success');
      assert.deepEqual(res.body.output, { text: 'the digest' });
      assert.equal(res.body.error, null);
      assert.equal(res.body.deduplicated, false);
      assert.ok(Number.isInteger(res.body.duration_ms));
      assert.equal(fake.calls.at(-1)?.prompt, 'Digest of news');
      const after = await get(s.id);
      assert.equal(after.total_runs, 1);
      assert.equal(after.last_status, 'success');
      assert.equal(after.last_run_at, p.clock.now().toISOString());
      // Custom input replaces input_data for that run only.
      fake.enqueue({ text: 'other' });
      const custom = await trigger(s.id, { input_data: { topic: 'sport' } });
      assert.equal(custom.body.status, 'success');
      assert.equal(fake.calls.at(-1)?.prompt, 'Digest of sport');
      assert.deepEqual((await get(s.id)).input_data, { topic: 'news' });
    });

    it('lists runs newest first, filters failed (error or timeout), selects fields and pages', async () => {
      const s = await create({
        agent: 'runco/digest',
        cron_expression: '0 9 * * *',
        input_data: { topic: 't' },
      });
      fake.enqueue({ text: 'ok 1' }, { status: 500 }, { text: 'ok 2' }, { status: 400 });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        p.clock.advance(1000);
        ids.push((await trigger(s.id)).body.run_id);
      }
      const all = await p.request<{ runs: Record<string, unknown>[]; total: number }>(
        'GET',
        `${base()}/${s.id}/runs`,
        {
          key: member.key,
        },
      );
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.total, 4);
      assert.deepEqual(
        all.body.runs.map((r) => r.run_id),
        [...ids].reverse(),
      );
      assert.equal(all.body.runs[0]?.trigger, 'manual');
      const failed = await p.request<{ runs: Record<string, unknown>[]; total: number }>(
        'GET',
        `${base()}/${s.id}/runs?status=failed&fields=run_id,status,error,output`,
        { key: member.key },
      );
      assert.equal(failed.body.total, 2);
      for (const r of failed.body.runs) {
        assert.deepEqual(Object.keys(r).sort(), ['error', 'output', 'run_id', 'status']);
        assert.equal(r.status, 'error');
        assert.equal(r.output, null, 'output is null on error');
        assert.match(String(r.error), /^LLM_ERROR: /);
      }
      const page = await p.request<{ runs: { run_id: string }[]; total: number }>(
        'GET',
        `${base()}/${s.id}/runs?limit=1&offset=1&status=success`,
        { key: member.key },
      );
      assert.deepEqual(
        page.body.runs.map((r) => r.run_id),
        [ids[0]],
      );
      const bad = await p.request('GET', `${base()}/${s.id}/runs?fields=run_id,secret_sauce`, {
        key: member.key,
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(errorOf(bad).fields, ['query.fields']);
    });

    // The secrets vault in AWS mode is Secrets Manager, which has no engine here: the run's
    // redaction is the same code on both stores, so this runs on SQLite (the local vault).
    const withVault = backend === 'sqlite' ? it : () => undefined;
    withVault(
      'stores no form of an injected secret in a run: a member reads the runs and the timeline',
      async () => {
        const value = `run-secret-${backend}-0123456789abcdef`;
        const put = await p.request('PUT', `/workspaces/${owner.ws}/secrets`, {
          key: owner.key,
          body: { name: 'RUN_TOKEN', value },
        });
        assert.equal(put.status, 200, put.text);
        const script =
          "const t=process.env.RUN_TOKEN,b=Buffer.from(t);console.log(JSON.stringify({raw:t,b64:b.toString('base64'),b64url:b.toString('base64url'),hex:b.toString('hex'),url:encodeURIComponent(t),blob:Buffer.from('xy'+t+'z').toString('base64')}))";
        const published = await p.request('POST', '/agents', {
          key: owner.key,
          body: {
            name: 'run-leaker',
            type: 'tool',
            description: 'Prints its secret in encoded forms.',
            supported_providers: ['any'],
            required_secrets: ['RUN_TOKEN'],
            runtime: { command: `node -e "${script}"` },
          },
        });
        assert.equal(published.status, 201, published.text);
        const s = await create({ agent: 'runco/run-leaker', type: 'webhook' });
        const run = await trigger(s.id);
        assert.equal(run.body.status, 'success', run.text);
        const b = Buffer.from(value);
        const forms = [
          value,
          b.toString('base64').replace(/=+$/, ''),
          b.toString('base64url'),
          b.toString('hex'),
          Buffer.from(`xy${value}z`).toString('base64').slice(4, 12),
        ];
        const runs = await p.request('GET', `${base()}/${s.id}/runs`, { key: member.key });
        const events = await p.request('GET', `${base()}/${s.id}/events`, { key: member.key });
        assert.equal(runs.status, 200, runs.text);
        assert.match(runs.text, /\[REDACTED\]/);
        for (const f of forms) {
          assert.ok(!run.text.includes(f), `${f} in the trigger's answer`);
          assert.ok(!runs.text.includes(f), `${f} in the stored runs`);
          assert.ok(!events.text.includes(f), `${f} in the timeline`);
        }
      },
    );

    it('records a timeout as status timeout', async () => {
      const published = await p.request('POST', '/agents', {
        key: owner.key,
        body: {
          name: 'slowpoke',
          description: 'Slow.',
          supported_providers: ['anthropic'],
          prompt_template: 'hi',
          timeout_seconds: 1,
        },
      });
      assert.equal(published.status, 201, published.text);
      const s = await create({ agent: 'runco/slowpoke', type: 'webhook' });
      fake.enqueue({ text: 'late', delayMs: 3000 });
      const res = await trigger(s.id);
      assert.equal(res.body.status, 'timeout');
      assert.equal(res.body.output, null);
      assert.match(String(res.body.error), /^TIMEOUT/);
      assert.equal((await get(s.id)).last_status, 'timeout');
    });

    it('alerts once at alert_on_failure_count, auto-disables at max_consecutive_failures, and resets on success or re-enable', async (t) => {
      // AWS mode (the DynamoDB store) refuses a loopback alert URL, so there the streak runs
      // without one: the counters, auto-disable and timeline are the same; no alert leaves.
      const withAlerts = backend === 'sqlite';
      const s = await create({
        agent: 'runco/digest',
        cron_expression: '*/5 * * * *',
        input_data: { topic: 't' },
        ...(withAlerts ? { alert_webhook_url: receiver.url } : {}),
        alert_on_failure_count: 2,
        max_consecutive_failures: 4,
      });
      // A success in between resets the count.
      fake.enqueue({ status: 500 }, { text: 'fine' });
      await trigger(s.id);
      assert.equal((await get(s.id)).consecutive_failures, 1);
      await trigger(s.id);
      assert.equal((await get(s.id)).consecutive_failures, 0, 'a success resets the counter');

      fake.setResponder(() => ({ status: 500, errorMessage: 'upstream is down' }));
      await trigger(s.id);
      await trigger(s.id);
      if (withAlerts) {
        const [streak] = await receiver.waitFor(1);
        assert.deepEqual(streak?.body, {
          event: 'schedule.failure_streak',
          schedule_id: s.id,
          workspace_id: owner.ws,
          agent_name: 'runco/digest',
          consecutive_failures: 2,
          threshold: 2,
          auto_disabled: false,
          last_error: streak?.body.last_error,
        });
        assert.match(String(streak?.body.last_error), /^LLM_ERROR/);
      }
      await trigger(s.id);
      await p.deps.notifier.drain();
      assert.equal(
        receiver.received.length,
        withAlerts ? 1 : 0,
        'one alert for the streak, not one per failure',
      );
      // Two runs failing at once both count (the revision condition retries the loser).
      const [a, b] = await Promise.all([trigger(s.id), trigger(s.id)]);
      assert.deepEqual([a.body.status, b.body.status], ['error', 'error']);
      if (withAlerts) {
        const [, disabled] = await receiver.waitFor(2);
        assert.equal(disabled?.body.auto_disabled, true);
        assert.equal(disabled?.body.threshold, 4);
      }
      const off = await get(s.id);
      assert.equal(off.consecutive_failures, 5);
      assert.equal(off.enabled, false);
      assert.equal(off.auto_disabled, true);
      assert.equal(off.next_run_at, null);
      assert.equal(off.total_runs, 7);
      assert.ok(p.logs.some((l) => l.includes('schedule auto-disabled') && l.includes(s.id)));
      const events = await p.request<{ events: { type: string; message: string }[] }>(
        'GET',
        `${base()}/${s.id}/events`,
        { key: member.key },
      );
      const types = events.body.events.map((e) => e.type);
      assert.equal(types.filter((x) => x === 'auto_disabled').length, 1, types.join());
      assert.equal(types.filter((x) => x === 'failure_alert').length, 2);
      fake.setResponder(undefined);
      await p.deps.notifier.drain();
      assert.equal(
        receiver.received.length,
        withAlerts ? 2 : 0,
        'the 5th failure, already disabled, alerts nothing',
      );

      const again = await p.request<Schedule>('PATCH', `${base()}/${s.id}`, {
        key: owner.key,
        body: { enabled: true },
      });
      assert.equal(again.body.consecutive_failures, 0, 're-enabling resets the counter');
      assert.equal(again.body.auto_disabled, false);
      assert.ok(again.body.next_run_at);
      t.diagnostic(
        `alerts received: ${receiver.received.length} for 5 consecutive failures (thresholds 2 and 4)`,
      );
    });

    it('sends a test alert now, reports the outcome, and refuses without an alert URL', async () => {
      if (backend === 'dynamodb') {
        // AWS mode: a loopback receiver is refused when saved, naming the rule.
        const refused = await p.request('POST', base(), {
          key: owner.key,
          body: { agent: 'runco/digest', type: 'webhook', alert_webhook_url: receiver.url },
        });
        assert.equal(refused.status, 400);
        assert.deepEqual(errorOf(refused).fields, ['body.alert_webhook_url']);
        const none = await create({ agent: 'runco/digest', type: 'webhook' });
        const noUrl = await p.request('POST', `${base()}/${none.id}/test-alert`, { key: owner.key });
        assert.equal(noUrl.status, 400);
        return;
      }
      const s = await create({ agent: 'runco/digest', type: 'webhook', alert_webhook_url: receiver.url });
      const res = await p.request<{ delivered: boolean; attempts: number }>(
        'POST',
        `${base()}/${s.id}/test-alert`,
        {
          key: owner.key,
        },
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.delivered, true);
      assert.equal(receiver.received[0]?.body.test, true);
      assert.equal(receiver.received[0]?.body.event, 'schedule.failure_streak');
      assert.equal(receiver.received[0]?.body.schedule_id, s.id);

      receiver.answer(503, 503, 503);
      const failing = await p.request<{ delivered: boolean; attempts: number; status_code: number }>(
        'POST',
        `${base()}/${s.id}/test-alert`,
        { key: owner.key },
      );
      assert.deepEqual(
        [failing.body.delivered, failing.body.attempts, failing.body.status_code],
        [false, 3, 503],
        'bounded retries: three attempts in all',
      );

      const member403 = await p.request('POST', `${base()}/${s.id}/test-alert`, { key: member.key });
      assert.equal(member403.status, 403);
      const none = await create({ agent: 'runco/digest', type: 'webhook' });
      const refused = await p.request('POST', `${base()}/${none.id}/test-alert`, { key: owner.key });
      assert.equal(refused.status, 400);
    });

    it('keeps run history and the timeline readable after deletion', async () => {
      const s = await create({ agent: 'runco/digest', type: 'webhook', input_data: { topic: 't' } });
      fake.enqueue({ text: 'kept' });
      const run = await trigger(s.id);
      const del = await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
      assert.equal(del.status, 204);
      assert.equal((await p.request('GET', `${base()}/${s.id}`, { key: owner.key })).status, 404);
      const runs = await p.request<{ runs: { run_id: string }[] }>('GET', `${base()}/${s.id}/runs`, {
        key: member.key,
      });
      assert.equal(runs.status, 200, runs.text);
      assert.deepEqual(
        runs.body.runs.map((r) => r.run_id),
        [run.body.run_id],
      );
      const events = await p.request<{ events: { type: string }[] }>('GET', `${base()}/${s.id}/events`, {
        key: member.key,
      });
      assert.equal(events.body.events[0]?.type, 'deleted');
      assert.equal((await trigger(s.id)).status, 404);
      const listed = await p.request<{ schedules: { id: string }[] }>('GET', base(), { key: owner.key });
      assert.ok(!listed.body.schedules.some((x) => x.id === s.id));
    });
  });
}

describe('alert delivery', () => {
  let receiver: AlertReceiver;
  before(async () => {
    receiver = await startAlertReceiver();
  });
  after(() => receiver.close());

  it('retries 5xx and 429 up to three attempts, and stops at once on another 4xx', async () => {
    const policy = { mode: 'local' as const, backoffMs: [5, 5] };
    const delivery = { url: receiver.url, payload: { event: 'x' }, label: 'test' };
    receiver.answer(500, 429);
    assert.deepEqual(await deliverAlert(delivery, policy), {
      delivered: true,
      attempts: 3,
      status: 200,
      error: null,
    });
    receiver.answer(404);
    const r = await deliverAlert(delivery, policy);
    assert.equal(r.delivered, false);
    assert.equal(r.attempts, 1);
    receiver.answer(500, 500, 500);
    assert.equal((await deliverAlert(delivery, policy)).attempts, 3);
  });

  it('checks the URL again when sending: a loopback receiver is refused in AWS mode, once', async () => {
    const r = await deliverAlert(
      { url: receiver.url, payload: {}, label: 'aws' },
      { mode: 'aws', backoffMs: [1, 1] },
    );
    assert.equal(r.delivered, false);
    assert.equal(r.attempts, 1);
    assert.match(String(r.error), /refused/);
    const metadata = await deliverAlert(
      { url: 'http://169.254.169.254/latest/meta-data', payload: {}, label: 'meta' },
      { mode: 'local', backoffMs: [1, 1] },
    );
    assert.equal(metadata.delivered, false);
    assert.match(String(metadata.error), /refused/);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await new Promise((r) => silent.once('listening', r));
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    const r = await deliverAlert(
      { url: `http://127.0.0.1:${port}/`, payload: {}, label: 'silent' },
      { mode: 'local', timeoutMs: 100, backoffMs: [1, 1] },
    );
    silent.closeAllConnections();
    silent.close();
    assert.equal(r.delivered, false);
    assert.equal(r.attempts, 3);
    assert.ok(Date.now() - started < 2000);
  });
});

describe('scheduled runs get only the secrets their agent declares', () => {
  it('a scheduled agent that uses an undeclared secret fails its run, and the value appears nowhere', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { packDirectory } = await import('../../functions/cli/pack.ts');
    const { startTestPlatform } = await import('../helpers/platform.ts');
    const p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    try {
      const o = await createAccount(p.deps, { org: 'secretco', tier: 'pro' });
      const key = o.api_key;
      const ws = o.workspace_id;
      const undeclared = 'undeclared-value-9f8e7d6c5b4a';
      for (const [name, value] of [
        ['DECLARED_TOKEN', 'declared-value-0123456789'],
        ['UNDECLARED_TOKEN', undeclared],
      ]) {
        const put = await p.request('PUT', `/workspaces/${ws}/secrets`, { key, body: { name, value } });
        assert.equal(put.status, 200, put.text);
      }
      const dir = await mkdtemp(join(tmpdir(), 'agenthost-sched-tool-'));
      await writeFile(
        join(dir, 'main.mjs'),
        [
          "const declared = process.env.DECLARED_TOKEN ? 'present' : 'absent';",
          'const other = process.env.UNDECLARED_TOKEN;',
          "if (!other) { console.error('UNDECLARED_TOKEN is not set'); process.exit(3); }",
          'console.log(JSON.stringify({ declared, other }));',
        ].join('\n'),
      );
      const bundle = (await packDirectory(dir)).data;
      await rm(dir, { recursive: true, force: true });
      const agent = await p.request<{ id: string }>('POST', '/agents', {
        key,
        body: {
          name: 'sneaky',
          type: 'tool',
          description: 'Reads a secret it did not declare.',
          supported_providers: ['any'],
          runtime: { command: 'node main.mjs' },
          required_secrets: ['DECLARED_TOKEN'],
        },
      });
      assert.equal(agent.status, 201, agent.text);
      const up = await p.request('POST', `/agents/${agent.body.id}/upload`, {
        key,
        rawBody: bundle,
        headers: { 'content-type': 'application/gzip' },
      });
      assert.equal(up.status, 200, up.text);
      const s = await p.request<{ id: string }>('POST', `/workspaces/${ws}/schedules`, {
        key,
        body: { agent: 'secretco/sneaky', cron_expression: '0 * * * *' },
      });
      assert.equal(s.status, 201, s.text);
      const run = await p.request<Run>('POST', `/workspaces/${ws}/schedules/${s.body.id}/trigger`, {
        key,
        body: {},
      });
      assert.equal(run.status, 200, run.text);
      assert.equal(run.body.status, 'error');
      assert.equal(run.body.output, null);
      // Exit status 3 is the script's own "not set" branch: the variable was not in its environment.
      assert.match(String(run.body.error), /exited with status 3/);
      const history = await p.request('GET', `/workspaces/${ws}/schedules/${s.body.id}/runs`, { key });
      for (const text of [run.text, history.text, p.logs.join('\n')]) assert.ok(!text.includes(undeclared));
      const got = await p.request<{ consecutive_failures: number; last_status: string }>(
        'GET',
        `/workspaces/${ws}/schedules/${s.body.id}`,
        { key },
      );
      assert.deepEqual([got.body.consecutive_failures, got.body.last_status], [1, 'error']);
    } finally {
      await p.close();
    }
  });
});
