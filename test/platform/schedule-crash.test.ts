import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startPlatformProcess } from '../helpers/process.ts';

/**
 * The platform as its own process, killed with SIGKILL while a schedule's run is in flight (the
 * model is still answering), then started again on the same data dir: the run must not vanish, and
 * is recorded as interrupted right at the restart, not after its deadline and the grace.
 */
describe('a schedule run cut off by a crash leaves a trace', () => {
  let fake: FakeLlmProviders;
  let dataDir: string;
  before(async () => {
    fake = await startFakeLlm();
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-schedule-crash-'));
  });
  after(async () => {
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('records the run that was in flight as interrupted, once, with an event on the schedule', {
    timeout: 90_000,
  }, async (t) => {
    const key = generateApiKey();
    const env = {
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: key,
      PLATFORM_BOOTSTRAP_TIER: 'pro',
      PLATFORM_RECONCILE_GRACE_MS: '60000',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    };
    let platform = await startPlatformProcess(env);
    const api = async (method: string, path: string, body?: unknown, auth = true) => {
      const res = await fetch(`${platform.url}${path}`, {
        method,
        headers: {
          ...(auth ? { authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: the shapes are what the assertions check.
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as any };
    };
    const published = await api('POST', '/agents', {
      name: 'slow',
      description: 'Answers slowly.',
      supported_providers: ['anthropic'],
      prompt_template: 'Answer {{q}}',
      // Room for the finished run on a loaded machine; the killed one is recorded at once anyway.
      timeout_seconds: 20,
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    const ws = (await api('GET', '/workspaces')).body.workspaces[0].id as string;
    const created = await api('POST', `/workspaces/${ws}/schedules`, {
      agent: 'local/slow',
      type: 'webhook',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const scheduleId = created.body.id as string;
    const webhookPath = new URL(created.body.webhook_url).pathname;

    // A finished run first: recorded as usual.
    fake.enqueue({ text: 'fine' });
    const finished = await api('POST', webhookPath, { q: 'one' }, false);
    assert.equal(finished.body.status, 'success', JSON.stringify(finished.body));

    // A run in flight when the process is killed.
    fake.setResponder(() => ({ text: 'too late', delayMs: 60_000 }));
    const startedAt = Date.now();
    const inFlight = api('POST', webhookPath, { q: 'two' }, false).catch((err: Error) => ({
      status: 0,
      body: { error: err.message },
    }));
    for (let i = 0; i < 200 && fake.calls.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(fake.calls.length, 2, 'the second run reached the model');
    await platform.stop('SIGKILL');
    assert.equal((await inFlight).status, 0, 'the webhook caller got no answer');
    fake.setResponder(undefined);

    // Started again at once, long before the run's deadline (20 s), the concurrency retries' budget
    // (6.9 s) and the grace: holding the data dir's lock, the new platform knows no other runs it,
    // and records it as interrupted before its first request.
    platform = await startPlatformProcess(env);
    t.diagnostic(`restarted ${Date.now() - startedAt} ms after the run started`);
    const runs = (await api('GET', `/workspaces/${ws}/schedules/${scheduleId}/runs`)).body.runs as {
      run_id: string;
      status: string;
      error: string | null;
    }[];
    t.diagnostic(`runs after restart: ${runs.map((r) => `${r.status} ${r.error ?? ''}`).join(' | ')}`);
    assert.equal(runs.length, 2, 'the finished run and the interrupted one');
    const interrupted = runs.filter((r) => r.status === 'error');
    assert.equal(interrupted.length, 1);
    assert.match(interrupted[0]?.error ?? '', /interrupted: the platform stopped/);
    const events = (await api('GET', `/workspaces/${ws}/schedules/${scheduleId}/events`)).body.events as {
      type: string;
      message: string;
    }[];
    const marks = events.filter((e) => e.type === 'interrupted');
    assert.equal(marks.length, 1, JSON.stringify(events));
    assert.match(marks[0]?.message ?? '', new RegExp(interrupted[0]?.run_id ?? 'none'));
    // The timeline's type filter knows every kind it records.
    const filtered = await api('GET', `/workspaces/${ws}/schedules/${scheduleId}/events?type=interrupted`);
    assert.equal(filtered.status, 200, JSON.stringify(filtered.body));
    assert.deepEqual(
      (filtered.body.events as { type: string }[]).map((e) => e.type),
      ['interrupted'],
    );
    await platform.stop();

    // A second restart records nothing more.
    platform = await startPlatformProcess(env);
    const again = (await api('GET', `/workspaces/${ws}/schedules/${scheduleId}/runs`)).body.runs as unknown[];
    assert.equal(again.length, 2);
    await platform.stop();
  });
});
