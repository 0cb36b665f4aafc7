import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bundleOf } from '../helpers/bundles.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { fetchUrl } from '../helpers/localhost-fetch.ts';
import { errorOf } from '../helpers/platform.ts';
import { spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Always-on services over HTTP against both deployments, as a user runs them (docs/services.md):
 * deploy a published agent whose bundle is a small HTTP server, wait until it is running, call it
 * through the URL the platform answers, read its logs with the secret redacted, patch and restart
 * it, watch a crash loop pause it, and delete it. Locally the URL is the service's own gateway
 * port; on the emulated deployment it is http://<name>-<workspace>.services.localhost:<port>, the
 * emulated load balancer routing by Host to the ECS task's gateway container, whose app container
 * runs the launcher the platform uploaded to S3, and supervision comes from the task state change
 * events through the service-events function.
 */

type Service = {
  id: string;
  state: string;
  health_status: string;
  url: string;
  crash_loop: boolean;
  consecutive_restart_failures: number;
  restart_count: number;
  last_error: string | null;
  secrets: string[];
  events: { type: string; message: string }[];
};
type Logs = {
  logs: { timestamp: string; level: string; message: string; request_id: string | null }[];
  next_cursor: string | null;
};

const SECRET_VALUE = 'svc-e2e-secret-7d3c9b1a5e2f';

/** Answers its path, a variable and the secret's length; MODE=crash exits at once. */
const APP = `
import { createServer } from 'node:http';
if (process.env.MODE === 'crash') { console.error('boom: crashing on purpose'); process.exit(1); }
console.log('starting with token ' + process.env.APP_TOKEN);
console.log('LONG' + 'x'.repeat(300 * 1024) + 'END');
createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ path: req.url, greeting: process.env.GREETING ?? null, token_length: (process.env.APP_TOKEN ?? '').length, port: process.env.PORT, http_port: process.env.PLATFORM_HTTP_PORT }));
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on ' + process.env.PORT));
`;

async function answer(url: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetchUrl(url).catch(() => undefined);
  if (res?.status !== 200) {
    await res?.arrayBuffer().catch(() => undefined);
    return undefined;
  }
  return (await res.json()) as Record<string, unknown>;
}

eachDeployment('always-on services', { timeout: 600_000 }, (kind) => {
  let d: Deployment;
  let owner: { key: string; ws: string };
  // Well inside a test's own 120 s, so that a wait that gives up says why (the state it saw, the
  // deployment's output) rather than the test being cut off mute; a start takes 4 to 6 s emulated.
  const wait = kind === 'emulated' ? 60_000 : 30_000;
  const base = () => `/workspaces/${owner.ws}/services`;
  const get = async (id: string) =>
    (await d.request<Service>('GET', `${base()}/${id}`, { key: owner.key })).body;
  const untilState = async (id: string, state: string) => {
    let last: Service | undefined;
    try {
      return await waitFor(
        `service ${state}`,
        async () => {
          last = await get(id);
          return last.state === state ? last : undefined;
        },
        wait,
      );
    } catch (err) {
      // What it was when the wait gave up, and what the deployment said until then.
      const seen = last && { state: last.state, events: last.events?.slice(-10) };
      throw new Error(`${String(err)}; last seen ${JSON.stringify(seen)}\n${d.output().slice(-4000)}`);
    }
  };
  const deploy = async (body: Record<string, unknown>) => {
    const res = await d.request<Service>('POST', base(), { key: owner.key, body });
    assert.equal(res.status, 201, `${res.text}\n${d.output().slice(-4000)}`);
    return res.body;
  };

  before(async () => {
    d = await startDeployment(kind);
    const o = await d.createAccount('svcco', 'pro');
    owner = { key: o.key, ws: o.workspaceId };
    const put = await d.request('PUT', `${`/workspaces/${owner.ws}`}/secrets`, {
      key: owner.key,
      body: { name: 'APP_TOKEN', value: SECRET_VALUE },
    });
    assert.equal(put.status, 200, put.text);
    const agent = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'web',
        type: 'tool',
        description: 'A small HTTP server.',
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        run_mode: 'always_on',
        timeout_seconds: 0,
        required_secrets: ['APP_TOKEN'],
      },
    });
    assert.equal(agent.status, 201, agent.text);
    const up = await d.request('POST', `/agents/${agent.body.id}/upload`, {
      key: owner.key,
      rawBody: await bundleOf({ 'server.mjs': APP }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
  });
  after(async () => {
    await d?.close();
  });

  it('deploys, serves through its URL with the secret injected, logs redacted, restarts on a patch and on request, deletes', async (t) => {
    const started = Date.now();
    const s = await deploy({ agent: 'svcco/web', name: 'web', env: { GREETING: 'hello' } });
    assert.equal(s.state, 'provisioning');
    if (kind === 'local') assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    else {
      const host = `web-${owner.ws.replace(/-/g, '').slice(0, 8)}.services.localhost`;
      assert.match(s.url, new RegExp(`^http://${host.replaceAll('.', '\\.')}:\\d+$`));
    }
    const running = await untilState(s.id, 'running');
    t.diagnostic(`${kind}: running ${((Date.now() - started) / 1000).toFixed(1)} s after the deploy`);
    assert.equal(running.health_status, 'healthy');
    assert.deepEqual(running.secrets, ['APP_TOKEN']);
    assert.ok(
      running.events.some((e) => e.type === 'ready'),
      running.events.map((e) => e.type).join(),
    );

    const health = await fetchUrl(`${s.url}/health`);
    assert.equal(health.status, 200, await health.text());
    const body = await waitFor('the app through its URL', () => answer(`${s.url}/some/path?x=1`), wait);
    assert.equal(body.path, '/some/path?x=1');
    assert.equal(body.greeting, 'hello');
    assert.equal(body.token_length, SECRET_VALUE.length, 'the required secret is injected');
    assert.equal(body.port, body.http_port);

    const logs = await waitFor(
      'the start line in the logs',
      async () => {
        const r = await d.request<Logs>('GET', `${base()}/${s.id}/logs`, { key: owner.key });
        return r.body.logs?.some((l) => l.message.startsWith('starting with token'))
          ? r.body.logs
          : undefined;
      },
      wait,
    );
    // A 300 KiB line is kept as its first and last 8 KiB around a marker, alike on both.
    const long = await waitFor(
      'the long line in the logs',
      async () => {
        const r = await d.request<Logs>('GET', `${base()}/${s.id}/logs`, { key: owner.key });
        return r.body.logs?.find((l) => l.message.startsWith('LONGxxx'));
      },
      wait,
    );
    assert.ok(long.message.endsWith('xxxEND'), long.message.slice(-40));
    assert.match(long.message, / …\[\d+ bytes cut from this line\]… /);
    assert.ok(Buffer.byteLength(long.message) < 17 * 1024, `${Buffer.byteLength(long.message)} bytes kept`);
    const line = logs.find((l) => l.message.startsWith('starting with token'));
    assert.equal(line?.message, 'starting with token [REDACTED]');
    assert.equal(line?.level, 'info');
    assert.ok(!JSON.stringify(logs).includes(SECRET_VALUE));
    const errorsOnly = await d.request<Logs>('GET', `${base()}/${s.id}/logs?level=error`, {
      key: owner.key,
    });
    assert.equal(errorsOnly.status, 200, errorsOnly.text);
    assert.ok(errorsOnly.body.logs.every((l) => l.level === 'error'));
    const future = await d.request<Logs>(
      'GET',
      `${base()}/${s.id}/logs?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      { key: owner.key },
    );
    assert.deepEqual(future.body.logs, []);
    // One shape with agent logs in both deployments: newest first, paged by next_cursor.
    for (const l of logs) {
      assert.deepEqual(Object.keys(l).sort(), ['level', 'message', 'request_id', 'timestamp']);
      assert.equal(l.request_id, null);
    }
    const until = encodeURIComponent(new Date().toISOString());
    const whole = await d.request<Logs>('GET', `${base()}/${s.id}/logs?until=${until}`, { key: owner.key });
    assert.ok(whole.body.logs.length >= 1, whole.text);
    const paged: Logs['logs'] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { body: Logs; text: string } = await d.request<Logs>(
        'GET',
        `${base()}/${s.id}/logs?until=${until}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        { key: owner.key },
      );
      assert.ok(page.body.logs.length <= 1, page.text);
      paged.push(...page.body.logs);
      cursor = page.body.next_cursor;
    }
    assert.deepEqual(paged, whole.body.logs);

    // A patch of env restarts it on the new values, at the same URL.
    const patched = await d.request<Service>('PATCH', `${base()}/${s.id}`, {
      key: owner.key,
      body: { env: { GREETING: 'patched' } },
    });
    assert.equal(patched.status, 200, patched.text);
    await waitFor(
      'the patched greeting',
      async () => ((await answer(`${s.url}/`))?.greeting === 'patched' ? true : undefined),
      wait,
    );
    assert.equal((await get(s.id)).url, s.url, 'the URL survives the restart');

    // `agenthost services logs --follow` (polling with since) sees the restart's lines, in both deployments.
    const beforeRestart = new Date().toISOString();
    const follow = spawnCli(['services', 'logs', s.id, '--follow', '--interval', '0.5', '--json'], {
      AGENTHOST_URL: d.url,
      AGENTHOST_API_KEY: owner.key,
      AGENTHOST_WORKSPACE: owner.ws,
      XDG_CONFIG_HOME: '/nonexistent-agenthost-config',
    });
    let back: Service;
    try {
      const restarted = await d.request<Service>('POST', `${base()}/${s.id}/restart`, { key: owner.key });
      assert.equal(restarted.status, 200, restarted.text);
      back = await untilState(s.id, 'running');
      await waitFor('the app after the restart', () => answer(`${s.url}/`), wait);
      await waitFor(
        'the restart’s start line through agenthost services logs --follow',
        () =>
          follow
            .stdout()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { timestamp: string; message: string })
            .find((l) => l.timestamp >= beforeRestart && l.message === 'starting with token [REDACTED]'),
        wait,
      );
      assert.ok(!follow.stdout().includes(SECRET_VALUE));
    } finally {
      await follow.stop();
    }
    // Replacing the process for a patch or a restart is not a crash.
    const settled = await get(s.id);
    assert.equal(settled.consecutive_restart_failures, 0, JSON.stringify(settled.events));
    assert.equal(settled.crash_loop, false);
    assert.equal(back.url, s.url);

    assert.equal((await d.request('DELETE', `${base()}/${s.id}`, { key: owner.key })).status, 204);
    assert.equal((await d.request('GET', `${base()}/${s.id}`, { key: owner.key })).status, 404);
    const gone = await waitFor(
      'the URL to stop serving the app',
      async () => ((await answer(`${s.url}/`)) === undefined ? true : undefined),
      wait,
    );
    assert.ok(gone);
    assert.ok(!d.output().includes(SECRET_VALUE), 'the secret value is in no platform output');
  });

  it('pauses a crash loop at max_restart_failures, and restart resumes it once fixed', async () => {
    const s = await deploy({
      agent: 'svcco/web',
      name: 'crashy',
      env: { MODE: 'crash' },
      max_restart_failures: 2,
    });
    const paused = await untilState(s.id, 'paused');
    assert.equal(paused.crash_loop, true);
    assert.equal(paused.consecutive_restart_failures, 2);
    assert.match(String(paused.last_error), /status 1/);
    const types = paused.events.map((e) => e.type);
    assert.ok(types.includes('crash_loop_paused'), types.join());
    // No process serves it while paused.
    assert.equal(await answer(`${s.url}/`), undefined);

    const fixed = await d.request<Service>('PATCH', `${base()}/${s.id}`, {
      key: owner.key,
      body: { env: { MODE: 'ok' } },
    });
    assert.equal(fixed.status, 200, fixed.text);
    assert.equal(fixed.body.state, 'paused', 'a patch of a paused service is stored, not applied');
    const resumed = await d.request<Service>('POST', `${base()}/${s.id}/restart`, { key: owner.key });
    assert.equal(resumed.status, 200, resumed.text);
    const running = await untilState(s.id, 'running');
    assert.equal(running.crash_loop, false);
    assert.equal(running.consecutive_restart_failures, 0);
    await waitFor('the resumed app', () => answer(`${s.url}/`), wait);
    assert.equal((await d.request('DELETE', `${base()}/${s.id}`, { key: owner.key })).status, 204);
  });

  it('refuses a deploy of an agent without a bundle, with the reason', async () => {
    await d.request('POST', '/agents?allow_no_secrets=true', {
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
    const res = await d.request('POST', base(), { key: owner.key, body: { agent: 'svcco/nobundle' } });
    assert.equal(res.status, 400, res.text);
    assert.match(errorOf(res).message + res.text, /no published code bundle/);
  });
});
