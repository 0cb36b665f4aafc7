import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf } from '../helpers/platform.ts';

/**
 * Schedules over HTTP against both deployments: a cron schedule that fires on the next minute (by
 * the in-process loop locally; by EventBridge Scheduler's stand-in invoking the synthesized fire
 * Lambda on the emulated deployment), webhooks with idempotency keys, manual triggers and the run
 * history. Real time: the cron case waits for the next minute.
 */

type Run = { run_id: string; status: string; output: Record<string, unknown> | null; deduplicated?: boolean };
type Schedule = { id: string; webhook_url?: string; next_run_at: string | null; total_runs: number };

// The two deployments' suites run side by side: each spends most of its time waiting for the next
// real minute, and they can wait for the same one.
eachDeployment('schedules: cron firing, webhooks and triggers', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let ws: string;

  before(async () => {
    fake = await startFakeLlm();
    fake.setResponder((call) => ({ text: `answer to: ${call.prompt}` }));
    d = await startDeployment(kind, {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const list = await d.request<{ workspaces: { id: string; slug: string }[] }>('GET', '/workspaces');
    ws = list.body.workspaces.find((w) => w.slug === 'local')?.id as string;
    const published = await d.request('POST', '/agents', {
      body: {
        name: 'echo',
        description: 'Echoes its input.',
        supported_providers: ['anthropic'],
        prompt_template: 'Echo {{word}}',
      },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await d?.close();
    await fake?.close();
  });

  it('fires a cron schedule on its next minute and records the run', async () => {
    const created = await d.request<Schedule>('POST', `/workspaces/${ws}/schedules`, {
      body: {
        agent: 'local/echo',
        cron_expression: '* * * * *',
        timezone: 'UTC',
        input_data: { word: 'tick' },
      },
    });
    assert.equal(created.status, 201, created.text);
    const next = Date.parse(created.body.next_run_at as string);
    assert.ok(next > Date.now() - 1000 && next <= Date.now() + 61_000, created.body.next_run_at ?? 'null');
    // The slot, plus the time a cold fire function and the model call take.
    const until = next + 45_000;
    let runs: Run[] = [];
    while (Date.now() < until) {
      const res = await d.request<{ runs: Run[] }>(
        'GET',
        `/workspaces/${ws}/schedules/${created.body.id}/runs`,
      );
      runs = res.body.runs ?? [];
      if (runs.some((r) => r.status === 'success')) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const run = runs.find((r) => r.status === 'success');
    assert.ok(
      run,
      `a successful run by ${new Date(until).toISOString()}: ${JSON.stringify(runs)}\n${d.output()}`,
    );
    assert.deepEqual(run.output, { text: 'answer to: Echo tick' });
    // The run's record is written first, the schedule's counters right after it (a separate
    // conditional update): wait for them rather than race them.
    let schedule = await d.request<Schedule>('GET', `/workspaces/${ws}/schedules/${created.body.id}`);
    for (let i = 0; i < 50 && schedule.body.total_runs < 1; i++) {
      await new Promise((r) => setTimeout(r, 200));
      schedule = await d.request<Schedule>('GET', `/workspaces/${ws}/schedules/${created.body.id}`);
    }
    assert.ok(schedule.body.total_runs >= 1, JSON.stringify(schedule.body));
    assert.ok(Date.parse(schedule.body.next_run_at as string) > next, 'the next slot moved on');
    assert.equal((await d.request('DELETE', `/workspaces/${ws}/schedules/${created.body.id}`)).status, 204);
  });

  it('runs a webhook once per idempotency key, merges its body over input_data, refuses wrong secrets', async () => {
    const created = await d.request<Schedule>('POST', `/workspaces/${ws}/schedules`, {
      body: { agent: 'local/echo', type: 'webhook', input_data: { word: 'default' } },
    });
    assert.equal(created.status, 201, created.text);
    const path = new URL(created.body.webhook_url as string, 'http://x').pathname;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      d.request<Run>('POST', path, { key: null, body, headers });

    const first = await post({ word: 'hook' }, { 'idempotency-key': 'k-1' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.status, 'success');
    assert.deepEqual(first.body.output, { text: 'answer to: Echo hook' });
    const again = await post({ word: 'hook' }, { 'idempotency-key': 'k-1' });
    assert.equal(again.status, 200);
    assert.equal(again.body.run_id, first.body.run_id);
    assert.equal(again.body.deduplicated, true);

    const wrong = await d.request(
      'POST',
      `/webhooks/${created.body.id}/whs_wrongwrongwrongwrongwrongwrongwrongwrong00`,
      {
        key: null,
        body: {},
      },
    );
    assert.equal(wrong.status, 404);
    assert.equal(errorOf(wrong).code, 'NOT_FOUND');

    const triggered = await d.request<Run>('POST', `/workspaces/${ws}/schedules/${created.body.id}/trigger`, {
      body: {},
    });
    assert.ok([200, 201, 202].includes(triggered.status), triggered.text);
    const runs = await d.request<{ runs: Run[] }>(
      'GET',
      `/workspaces/${ws}/schedules/${created.body.id}/runs`,
    );
    assert.equal(runs.status, 200);
    assert.equal(runs.body.runs.length, 2, 'the webhook run (once) and the manual trigger');
  });
});
