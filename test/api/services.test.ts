import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { loadStoredService } from '../../functions/core/services/service-record.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { waitFor } from '../helpers/wait-for.ts';

type Service = {
  id: string;
  state: string;
  health_status: string;
  url: string;
  agent_version: string;
  crash_loop: boolean;
  consecutive_restart_failures: number;
  restart_count: number;
  last_error: string | null;
  secrets: string[];
  events: { type: string; message: string; at: string }[];
};

const SECRET_VALUE = 'svc-secret-value-8c1d2e3f4a5b';

/** A small HTTP app: answers its env and the request path; MODE=crash exits at once. */
const APP = `
import { createServer } from 'node:http';
if (process.env.MODE === 'crash') { console.error('boom: crashing on purpose'); process.exit(1); }
console.log('starting with token ' + process.env.APP_TOKEN);
const delay = Number(process.env.LISTEN_DELAY_MS ?? 0);
setTimeout(() => {
  createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, greeting: process.env.GREETING ?? null, token_length: (process.env.APP_TOKEN ?? '').length, port: process.env.PORT, http_port: process.env.PLATFORM_HTTP_PORT }));
  }).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on ' + process.env.PORT));
}, delay);
`;

describe('always-on services, end to end with real processes (local host)', () => {
  let p: TestPlatform;
  let receiver: AlertReceiver;
  let owner: { key: string; ws: string };
  const base = () => `/workspaces/${owner.ws}/services`;
  const get = async (id: string) =>
    (await p.request<Service>('GET', `${base()}/${id}`, { key: owner.key })).body;
  const publishApp = async (
    name: string,
    files: Record<string, string>,
    extra: Record<string, unknown> = {},
  ) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name,
        type: 'tool',
        description: `${name} service`,
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        run_mode: 'always_on',
        timeout_seconds: 0,
        required_secrets: ['APP_TOKEN'],
        ...extra,
      },
    });
    assert.equal(res.status, 201, res.text);
    const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: owner.key,
      rawBody: await bundleOf(files),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
  };
  const deploy = async (body: Record<string, unknown>) => {
    const res = await p.request<Service>('POST', base(), { key: owner.key, body });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const untilState = (id: string, state: string, timeoutMs?: number) =>
    waitFor(
      `service ${state}`,
      async () => {
        const s = await get(id);
        return s.state === state ? s : undefined;
      },
      timeoutMs,
    );

  before(async () => {
    receiver = await startAlertReceiver();
    p = await startTestPlatform(
      { PLATFORM_SERVICE_BACKOFF_MS: '50', PLATFORM_SERVICE_START_TIMEOUT_MS: '8000' },
      'sqlite',
      { notifier: fastNotifier() },
    );
    const o = await createAccount(p.deps, { org: 'svcco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    const put = await p.request('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'APP_TOKEN', value: SECRET_VALUE },
    });
    assert.equal(put.status, 200, put.text);
    await publishApp('web', { 'server.mjs': APP });
  });
  after(async () => {
    await p.close();
    await receiver.close();
  });

  it('serves an app through its gateway URL: /health 503 before ready, 200 after; PORT and PLATFORM_HTTP_PORT set', async (t) => {
    const s = await deploy({
      agent: 'svcco/web',
      name: 'web-slow',
      env: { GREETING: 'hello', LISTEN_DELAY_MS: '1500' },
    });
    assert.equal(s.state, 'provisioning');
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const early = await fetch(`${s.url}/health`);
    assert.equal(early.status, 503, 'not ready while the app has not bound its port');
    const running = await untilState(s.id, 'running');
    assert.equal(running.health_status, 'healthy');
    const health = await fetch(`${s.url}/health`);
    assert.equal(health.status, 200);
    const started = performance.now();
    const res = await fetch(`${s.url}/some/path?x=1`);
    const body = (await res.json()) as Record<string, unknown>;
    t.diagnostic(`first proxied request: ${(performance.now() - started).toFixed(1)} ms`);
    assert.equal(body.path, '/some/path?x=1');
    assert.equal(body.greeting, 'hello');
    assert.equal(body.token_length, SECRET_VALUE.length, 'the required secret is injected');
    assert.equal(body.port, body.http_port, 'PORT and PLATFORM_HTTP_PORT are the same');
    assert.deepEqual(running.secrets, ['APP_TOKEN']);
    const types = running.events.map((e) => e.type);
    assert.ok(types.includes('deployed') && types.includes('ready'), types.join());
  });

  it('redacts secret values in logs, and filters logs by level and time', async () => {
    const s = await deploy({ agent: 'svcco/web', name: 'web-logs' });
    await untilState(s.id, 'running');
    const logs = await waitFor('the start line in the logs', async () => {
      const r = await p.request<{
        logs: { level: string; message: string; timestamp: string; request_id: null }[];
      }>('GET', `${base()}/${s.id}/logs`, {
        key: owner.key,
      });
      return r.body.logs.some((l) => l.message.startsWith('starting with token')) ? r.body.logs : undefined;
    });
    const line = logs.find((l) => l.message.startsWith('starting with token'));
    assert.equal(line?.message, 'starting with token [REDACTED]');
    assert.equal(line?.level, 'info');
    // The shape agent logs have too (core/logs): newest first, no call behind a service's line.
    for (const l of logs)
      assert.deepEqual(Object.keys(l).sort(), ['level', 'message', 'request_id', 'timestamp']);
    assert.ok(logs.every((l) => l.request_id === null));
    assert.deepEqual(
      logs.map((l) => l.timestamp),
      logs
        .map((l) => l.timestamp)
        .sort()
        .reverse(),
    );
    assert.ok(!JSON.stringify(logs).includes(SECRET_VALUE));
    assert.ok(!p.logs.join('\n').includes(SECRET_VALUE));
    const errorsOnly = await p.request<{ logs: { level: string }[] }>(
      'GET',
      `${base()}/${s.id}/logs?level=error`,
      {
        key: owner.key,
      },
    );
    assert.ok(errorsOnly.body.logs.every((l) => l.level === 'error'));
    const future = await p.request<{ logs: unknown[] }>(
      'GET',
      `${base()}/${s.id}/logs?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      { key: owner.key },
    );
    assert.deepEqual(future.body.logs, []);
    await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
  });

  it('patching env or secrets restarts a running service, and the app sees the new values', async (t) => {
    const s = await deploy({ agent: 'svcco/web', name: 'web-patch', env: { GREETING: 'old' } });
    await untilState(s.id, 'running');
    const before = await get(s.id);
    const started = performance.now();
    const patched = await p.request<Service>('PATCH', `${base()}/${s.id}`, {
      key: owner.key,
      body: { env: { GREETING: 'new' } },
    });
    assert.equal(patched.status, 200, patched.text);
    const body = await waitFor('the new greeting', async () => {
      const r = await fetch(`${s.url}/`).catch(() => undefined);
      if (r?.status !== 200) return undefined;
      const b = (await r.json()) as { greeting: string };
      return b.greeting === 'new' ? b : undefined;
    });
    t.diagnostic(
      `restart after a patch: serving the new values ${(performance.now() - started).toFixed(0)} ms after the PATCH`,
    );
    assert.equal(body.greeting, 'new');
    const after = await get(s.id);
    assert.equal(after.url, before.url, 'the URL survives the restart');
    assert.ok(after.events.some((e) => e.type === 'config_updated' && /restarting/.test(e.message)));
    // Full replacement: the extra secret names sent become the whole set (missing ones are refused).
    const missing = await p.request('PATCH', `${base()}/${s.id}`, {
      key: owner.key,
      body: { secrets: ['NOPE_TOKEN'] },
    });
    assert.equal(missing.status, 400);
    assert.equal(errorOf(missing).code, 'MISSING_SECRETS');
    await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
  });

  it('crash loop: restarts with backoff, warns at half of max_restart_failures, auto-pauses at the maximum; restart resumes', async (t) => {
    const s = await deploy({
      agent: 'svcco/web',
      name: 'web-crash',
      env: { MODE: 'crash' },
      max_restart_failures: 4,
      alert_webhook_url: receiver.url,
    });
    const paused = await untilState(s.id, 'paused', 20_000);
    assert.equal(paused.crash_loop, true);
    assert.equal(paused.consecutive_restart_failures, 4);
    assert.match(String(paused.last_error), /exited with status 1: boom: crashing on purpose/);
    const alerts = await receiver.waitFor(2);
    assert.deepEqual(
      alerts.map((a) => [a.body.severity, a.body.consecutive_restart_failures, a.body.paused]),
      [
        ['warning', 2, false],
        ['critical', 4, true],
      ],
    );
    assert.equal(alerts[1]?.body.service_id, s.id);
    assert.equal(alerts[1]?.body.event, 'service.crash_loop');
    const types = paused.events.map((e) => e.type);
    assert.ok(types.includes('crash_warning') && types.includes('crash_loop_paused'), types.join());
    t.diagnostic(
      `crash loop: paused after ${paused.restart_count} restarts; alerts: ${alerts.map((a) => a.body.severity).join(', ')}`,
    );

    // A patch while paused is stored, not applied: it stays paused.
    const patched = await p.request<Service>('PATCH', `${base()}/${s.id}`, {
      key: owner.key,
      body: { env: { MODE: 'ok' } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.state, 'paused');
    assert.deepEqual(
      (patched.body as Service & { env?: unknown }).env,
      { MODE: 'ok' },
      'the patch is stored',
    );
    // Not applied: a patch that restarts starts the service before it answers, so nothing
    // started by now means nothing will. The newest event is the patch, saying when it applies.
    const afterPatch = await get(s.id);
    assert.equal(afterPatch.state, 'paused');
    assert.equal(afterPatch.restart_count, paused.restart_count, 'no restart since the pause');
    assert.equal(afterPatch.events[0]?.type, 'config_updated', afterPatch.events.map((e) => e.type).join());
    assert.match(afterPatch.events[0]?.message ?? '', /applies when the service is restarted/);
    const deployedLaunch = (await loadStoredService(p.deps, s.id))?.launchedAt;
    assert.ok(deployedLaunch, 'the deploy launched it');
    p.clock.advance(60_000);
    const restartAt = p.clock.now().toISOString();
    const restarted = await p.request<Service>('POST', `${base()}/${s.id}/restart`, { key: owner.key });
    assert.equal(restarted.status, 200, restarted.text);
    const running = await untilState(s.id, 'running');
    assert.equal(running.crash_loop, false);
    assert.equal(running.consecutive_restart_failures, 0);
    // The launch's time is stored before the runner starts its process: a report of a task created
    // before it (in AWS, ECS's events arrive late) is an earlier launch's (jobs/service-events.ts).
    const launchedAt = (await loadStoredService(p.deps, s.id))?.launchedAt;
    const started = running.events.find((e) => e.type === 'starting');
    assert.ok(launchedAt && started, running.events.map((e) => e.type).join());
    assert.ok(deployedLaunch < launchedAt, `${deployedLaunch} then ${launchedAt}`);
    assert.equal(launchedAt, restartAt);
    assert.ok(launchedAt <= started.at, `${launchedAt} ${started.at}`);
    assert.equal((await fetch(`${s.url}/health`)).status, 200);
    await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
  });

  it('an app that binds the gateway port 8080 fails with a clear reason', async (t) => {
    await publishApp(
      'squatter',
      {
        'server.mjs':
          "import { createServer } from 'node:http'; createServer((q, r) => r.end('x')).listen(8080, '127.0.0.1'); setInterval(() => {}, 1000);",
      },
      { required_secrets: [] },
    );
    const s = await deploy({ agent: 'svcco/squatter', max_restart_failures: 2 });
    const paused = await untilState(s.id, 'paused', 30_000);
    assert.match(String(paused.last_error), /8080/);
    t.diagnostic(`last_error: ${paused.last_error}`);
    await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
  });

  it('refuses prompt agents, agents without a bundle, sensitive env names and Free accounts, clearly', async () => {
    await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'chatty', description: 'A prompt.', supported_providers: ['any'], prompt_template: 'hi' },
    });
    const prompt = await p.request('POST', base(), { key: owner.key, body: { agent: 'svcco/chatty' } });
    assert.equal(prompt.status, 400);
    assert.match(errorOf(prompt).message + JSON.stringify(prompt.body), /prompt agent/);
    await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'nobundle',
        type: 'tool',
        description: 'No code.',
        supported_providers: ['any'],
        runtime: { command: 'node x.js' },
        required_secrets: [],
      },
    });
    const noBundle = await p.request('POST', base(), { key: owner.key, body: { agent: 'svcco/nobundle' } });
    assert.equal(noBundle.status, 400);
    assert.match(JSON.stringify(noBundle.body), /no published code bundle/);
    const sensitive = await p.request('POST', base(), {
      key: owner.key,
      body: { agent: 'svcco/web', env: { DB_PASSWORD: 'x', STRIPE_API_KEY: 'y', OK_VAR: 'z' } },
    });
    assert.equal(sensitive.status, 400);
    assert.deepEqual(errorOf(sensitive).fields.sort(), ['body.env.DB_PASSWORD', 'body.env.STRIPE_API_KEY']);
    assert.match(JSON.stringify(sensitive.body), /secrets/);
    const free = await createAccount(p.deps, { org: 'svc-free', tier: 'free' });
    const refused = await p.request('POST', `/workspaces/${free.workspace_id}/services`, {
      key: free.api_key,
      body: { agent: 'svcco/web' },
    });
    assert.equal(refused.status, 403);
    // Another workspace's agent whose code is not downloadable cannot be deployed (its code would
    // run under someone else's command and logs).
    const stranger = await createAccount(p.deps, { org: 'svc-stranger', tier: 'pro' });
    await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'closed',
        type: 'tool',
        description: 'Public, not downloadable.',
        supported_providers: ['any'],
        runtime: { command: 'node index.js' },
        required_secrets: [],
        is_public: true,
      },
    });
    const foreign = await p.request('POST', `/workspaces/${stranger.workspace_id}/services`, {
      key: stranger.api_key,
      body: { agent: 'svcco/closed' },
    });
    assert.equal(foreign.status, 403);
    assert.match(errorOf(foreign).message, /not downloadable/);
    const tooMany = await p.request('POST', base(), {
      key: owner.key,
      body: { agent: 'svcco/web', name: 'big', max_instances: 4 },
    });
    assert.equal(tooMany.status, 400);
    assert.deepEqual(errorOf(tooMany).fields, ['body.max_instances']);
    // Only min_instances sent (max follows it): the error names the field that was sent.
    const tooManyMin = await p.request('POST', base(), {
      key: owner.key,
      body: { agent: 'svcco/web', name: 'big', min_instances: 4 },
    });
    assert.equal(tooManyMin.status, 400);
    assert.deepEqual(errorOf(tooManyMin).fields, ['body.min_instances']);
  });

  it('holds the Pro limit of 5 services under racing deploys, and frees a slot on delete', async (t) => {
    const o = await createAccount(p.deps, { org: 'svc-limit', tier: 'pro' });
    // Its own agent, in its own workspace.
    const idle = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: o.api_key,
      body: {
        name: 'idle',
        type: 'tool',
        description: 'Idles.',
        supported_providers: ['any'],
        runtime: { command: 'node index.js' },
        required_secrets: [],
      },
    });
    assert.equal(idle.status, 201, idle.text);
    await p.request('POST', `/agents/${idle.body.id}/upload`, {
      key: o.api_key,
      rawBody: await bundleOf({ 'index.js': 'setInterval(() => {}, 1000);' }),
      headers: { 'content-type': 'application/gzip' },
    });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        p.request<Service>('POST', `/workspaces/${o.workspace_id}/services`, {
          key: o.api_key,
          body: { agent: 'svc-limit/idle', name: `idle-${i}`, http: false },
        }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 403);
    t.diagnostic(`8 racing deploys on Pro: ${created.length} created, ${refused.length} refused`);
    assert.equal(created.length, 5);
    assert.equal(refused.length, 3);
    assert.match(errorOf(refused[0] as never).message, /5 services/);
    const first = created[0]?.body.id as string;
    assert.equal(
      (await p.request('DELETE', `/workspaces/${o.workspace_id}/services/${first}`, { key: o.api_key }))
        .status,
      204,
    );
    const again = await p.request('POST', `/workspaces/${o.workspace_id}/services`, {
      key: o.api_key,
      body: { agent: 'svc-limit/idle', name: 'idle-again', http: false },
    });
    assert.equal(again.status, 201, again.text);
    for (const r of [...created.slice(1), again]) {
      await p.request('DELETE', `/workspaces/${o.workspace_id}/services/${r.body.id}`, { key: o.api_key });
    }
  });

  it('runs an always-on agent’s runtime.command when neither a deploy command nor run_command is set, before the file scan', async () => {
    // index.js is what the scan would pick; it exits at once. runtime.command names the app.
    await publishApp(
      'named',
      { 'serve-app.mjs': APP, 'index.js': 'process.exit(3);' },
      { runtime: { command: 'node serve-app.mjs' } },
    );
    const s = await deploy({ agent: 'svcco/named', name: 'named' });
    const running = await untilState(s.id, 'running');
    assert.equal(running.restart_count, 0, running.last_error ?? '');
    const r = await fetch(`${s.url}/hello`);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { path: string }).path, '/hello');
    assert.equal((await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key })).status, 204);
  });

  it('follows a new version on publish (auto_update), restarting on it', async () => {
    const s = await deploy({ agent: 'svcco/web', name: 'web-follow' });
    await untilState(s.id, 'running');
    const noSuchVersion = await p.request('POST', `${base()}/${s.id}/update`, {
      key: owner.key,
      body: { version: 'v99' },
    });
    assert.equal(noSuchVersion.status, 400);
    assert.deepEqual(errorOf(noSuchVersion).fields, ['body.version'], 'the field that was sent');
    await publishApp('web', {
      'server.mjs': APP.replace('greeting: process.env.GREETING ?? null', "greeting: 'v2'"),
    });
    const moved = await waitFor('v2 serving', async () => {
      const svc = await get(s.id);
      if (svc.agent_version !== 'v2' || svc.state !== 'running') return undefined;
      const r = await fetch(`${s.url}/`).catch(() => undefined);
      const b = r && r.status === 200 ? ((await r.json()) as { greeting: string }) : undefined;
      return b?.greeting === 'v2' ? svc : undefined;
    });
    assert.ok(moved.events.some((e) => e.type === 'version_updated' && /v1 to v2/.test(e.message)));
    await p.request('DELETE', `${base()}/${s.id}`, { key: owner.key });
    assert.equal((await p.request('GET', `${base()}/${s.id}`, { key: owner.key })).status, 404);
    const gone = await fetch(`${s.url}/health`).catch(() => undefined);
    assert.equal(gone, undefined, 'the gateway is closed');
  });
});

describe('service supervision: the healthy period, and a restart of the platform', () => {
  it('resets the restart-failure counter after the healthy period, so a slow crasher is never paused', {
    timeout: 60_000,
  }, async (t) => {
    const p = await startTestPlatform(
      { PLATFORM_SERVICE_BACKOFF_MS: '20', PLATFORM_SERVICE_HEALTHY_MS: '300' },
      'sqlite',
      { notifier: fastNotifier() },
      { inMemory: true },
    );
    try {
      const o = await createAccount(p.deps, { org: 'healco', tier: 'pro' });
      const agent = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
        key: o.api_key,
        body: {
          name: 'flaky',
          type: 'tool',
          description: 'Crashes after 1.6 s.',
          supported_providers: ['any'],
          runtime: { command: 'node index.js' },
          required_secrets: [],
        },
      });
      await p.request('POST', `/agents/${agent.body.id}/upload`, {
        key: o.api_key,
        rawBody: await bundleOf({ 'index.js': 'setTimeout(() => process.exit(2), 1600);' }),
        headers: { 'content-type': 'application/gzip' },
      });
      const base = `/workspaces/${o.workspace_id}/services`;
      const s = await p.request<Service>('POST', base, {
        key: o.api_key,
        body: { agent: 'healco/flaky', http: false, max_restart_failures: 2 },
      });
      assert.equal(s.status, 201, s.text);
      const seen = await waitFor(
        'three restarts',
        async () => {
          const r = await p.request<Service>('GET', `${base}/${s.body.id}`, { key: o.api_key });
          return r.body.restart_count >= 3 ? r.body : undefined;
        },
        30_000,
      );
      t.diagnostic(
        `after ${seen.restart_count} crashes, each after a healthy period: state ${seen.state}, counter ${seen.consecutive_restart_failures}, last error ${seen.last_error}`,
      );
      assert.notEqual(seen.state, 'paused');
      assert.ok(seen.consecutive_restart_failures <= 1);

      // The platform stops (every process with it) and comes back: the service runs again.
      await p.deps.serviceRunner.close();
      const { resumeServices } = await import('../../functions/core/services/service-launch.ts');
      assert.equal(await resumeServices(p.deps), 1);
      const back = await waitFor('the resumed process', async () => {
        const r = await p.request<Service>('GET', `${base}/${s.body.id}`, { key: o.api_key });
        return r.body.events.filter((e) => e.type === 'starting').length >
          seen.events.filter((e) => e.type === 'starting').length
          ? r.body
          : undefined;
      });
      assert.notEqual(back.state, 'paused');
    } finally {
      await p.close();
    }
  });
});
