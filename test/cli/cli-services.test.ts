import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { spawnCli } from '../helpers/process.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { publishAlwaysOn } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * `agenthost services …` as its users run it: the CLI as a subprocess against the local platform,
 * deploying real always-on apps in the sandbox (bubblewrap), reached through their gateway URLs on
 * loopback.
 */

const TOKEN = 'cli-svc-token-5e6f7a8b9c';

/**
 * An HTTP app: answers its version, env and an id new at each start, and logs each request;
 * MODE=crash exits at once, LISTEN_DELAY_MS delays listening.
 */
const app = (version: string) => `
import { createServer } from 'node:http';
const boot = Math.random().toString(36).slice(2);
if (process.env.MODE === 'crash') { console.error('boom: crashing on purpose'); process.exit(1); }
console.log('starting ${version}');
setTimeout(() => {
  createServer((req, res) => {
    console.log('hit ' + req.url);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ version: '${version}', greeting: process.env.GREETING ?? null, extra: process.env.EXTRA ?? null, token_length: (process.env.APP_TOKEN ?? '').length, boot }));
  }).listen(Number(process.env.PORT), '127.0.0.1');
}, Number(process.env.LISTEN_DELAY_MS ?? 0));
`;

type Answer = {
  version: string;
  greeting: string | null;
  extra: string | null;
  token_length: number;
  boot: string;
};
type Service = {
  id: string;
  name: string;
  agent: string;
  agent_version: string;
  auto_update: boolean;
  state: string;
  health_status: string;
  url: string | null;
  env: Record<string, string>;
  extra_secrets: string[];
  min_instances: number;
  max_instances: number;
  events?: { type: string; message: string }[];
};

/** The app's answer through the gateway URL, or undefined while it does not answer. */
async function ask(url: string, path = '/'): Promise<Answer | undefined> {
  const res = await fetch(`${url}${path}`).catch(() => undefined);
  return res?.status === 200 ? ((await res.json()) as Answer) : undefined;
}

describe('agenthost services against the local platform, with real apps', () => {
  let p: TestPlatform;
  let home: string;
  let alpha: { key: string; accountId: string; workspaceId: string };
  let bravo: { key: string; accountId: string; workspaceId: string };
  let free: { key: string; accountId: string; workspaceId: string };
  let web: Service;
  const envOf = (key: string) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
  });
  // In this process (test/helpers/cli-in-process.ts): the process itself is checked where it matters
  // (logs --follow below, stopped by a signal, keeps a subprocess).
  const cli = (args: string[], key = alpha.key) => runCliInProcess(args, envOf(key));
  const json = async <T>(args: string[], key = alpha.key): Promise<T> => {
    const res = await cli([...args, '--json'], key);
    assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    return JSON.parse(res.stdout) as T;
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-services-'));
    p = await startTestPlatform(
      { PLATFORM_SERVICE_BACKOFF_MS: '50', PLATFORM_SERVICE_START_TIMEOUT_MS: '8000' },
      'sqlite',
      { notifier: fastNotifier() },
    );
    alpha = await p.createAccount('svc-alpha', 'pro');
    bravo = await p.createAccount('svc-bravo', 'pro');
    free = await p.createAccount('svc-free', 'free');
    const put = await p.request('PUT', `/workspaces/${alpha.workspaceId}/secrets`, {
      key: alpha.key,
      body: { name: 'APP_TOKEN', value: TOKEN },
    });
    assert.equal(put.status, 200, put.text);
    await publishAlwaysOn(p, alpha.key, {
      name: 'web',
      description: 'A web app.',
      files: { 'server.mjs': app('v1') },
    });
    const prompt = await p.request('POST', '/agents', {
      key: alpha.key,
      body: { name: 'chat', description: 'A prompt agent.', supported_providers: ['anthropic'] },
    });
    assert.equal(prompt.status, 201, prompt.text);
  });
  after(async () => {
    await p?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('deploys: waits with progress on stderr until the app runs, then prints its URL; the app answers there', async () => {
    const res = await cli([
      'services',
      'deploy',
      'svc-alpha/web',
      '--env',
      'GREETING=hello',
      '-e',
      'EXTRA=a=b',
      '--secret',
      'APP_TOKEN',
      '--max-restart-failures',
      '4',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const url = res.stdout.trim();
    assert.equal(res.stdout, `${url}\n`, 'stdout is the URL alone');
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(res.stderr, /^deployed svc-alpha\/web@v1 as web \([0-9a-f-]{36}\)$/m);
    assert.match(res.stderr, /^web: provisioning, starting \(\d+\.\d s\)$/m);
    assert.match(res.stderr, /^web: running, healthy \(\d+\.\d s\)$/m);
    const answer = await ask(url);
    assert.ok(answer, 'the app answers through the URL at once');
    assert.deepEqual([answer.version, answer.greeting, answer.extra], ['v1', 'hello', 'a=b']);
    assert.equal(answer.token_length, TOKEN.length, 'the --secret is injected');

    web = await json<Service>(['services', 'get', 'web']);
    assert.equal(web.url, url);
    assert.equal(web.state, 'running');
    assert.deepEqual(web.env, { GREETING: 'hello', EXTRA: 'a=b' });
    assert.deepEqual(web.extra_secrets, ['APP_TOKEN']);
    assert.ok(web.events?.some((e) => e.type === 'deployed'));
  });

  it('lists and shows services, by name or id', async () => {
    const listed = await json<{ services: Service[]; total: number }>(['services', 'list']);
    assert.deepEqual(
      listed.services.map((s) => [s.name, s.state]),
      [['web', 'running']],
    );
    const table = await cli(['services', 'list']);
    assert.match(table.stdout, /^NAME +AGENT +STATE +HEALTH +URL +ID$/m);
    assert.match(
      table.stdout,
      new RegExp(`^web +svc-alpha/web@v1 +running +healthy +${web.url} +${web.id}$`, 'm'),
    );
    const byId = await cli(['services', 'get', web.id]);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.stdout, /^name +web$/m);
    assert.match(byId.stdout, /^state +running$/m);
    assert.match(byId.stdout, /^env +\{"GREETING":"hello","EXTRA":"a=b"\}$/m);
    assert.match(byId.stdout, /^secrets +APP_TOKEN$/m);
    assert.match(byId.stdout, /^failed starts +0 of 4$/m);
    assert.match(byId.stdout, /^recent events \(newest first\):$/m);
    assert.match(byId.stdout, /^ {2}\S+Z +deployed +Deployed svc-alpha\/web@v1$/m);
  });

  it('shows the app’s logs, and --follow prints a new line as it comes', async () => {
    assert.ok(await ask(web.url!, '/first'));
    const lines = await waitFor('the request’s line', async () => {
      const res = await cli(['services', 'logs', 'web']);
      assert.equal(res.code, 0, res.stderr);
      return /^\S+Z INFO +hit \/first$/m.test(res.stdout) ? res.stdout : undefined;
    });
    assert.match(lines, /^\S+Z INFO +starting v1$/m);
    const page = await json<{ logs: { level: string; message: string; request_id: null }[] }>([
      'services',
      'logs',
      'web',
    ]);
    assert.ok(
      page.logs.some((l) => l.message === 'hit /first' && l.level === 'info' && l.request_id === null),
    );
    const errorsOnly = await cli(['services', 'logs', web.id, '--level', 'error']);
    assert.equal(errorsOnly.code, 0, errorsOnly.stderr);
    assert.doesNotMatch(errorsOnly.stdout, /hit \/first/);

    const follow = spawnCli(
      ['services', 'logs', 'web', '--follow', '--interval', '0.2', '--json'],
      envOf(alpha.key),
    );
    try {
      await waitFor('the first lines', () => (follow.stdout().includes('hit /first') ? true : undefined));
      assert.ok(await ask(web.url!, '/followed'));
      await waitFor('the new line', () => (follow.stdout().includes('hit /followed') ? true : undefined));
      await new Promise((r) => setTimeout(r, 600));
      const followed = follow
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { message: string });
      assert.equal(followed.filter((l) => l.message === 'hit /followed').length, 1, 'printed once');
      assert.equal(followed.at(-1)?.message, 'hit /followed', 'the newest last');
    } finally {
      await follow.stop();
    }
  });

  it('updates settings (env merged, a restart waited for), pins a version and moves to the latest', async () => {
    const before = await ask(web.url!);
    const res = await cli(['services', 'update', 'web', '--env', 'GREETING=hi', '--unset-env', 'EXTRA']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^env +\{"GREETING":"hi"\}$/m);
    assert.match(res.stdout, /^state +running$/m, 'waited until it runs again');
    assert.match(res.stderr, /^web: running, healthy/m);
    const after = await ask(web.url!);
    assert.deepEqual([after?.greeting, after?.extra], ['hi', null]);
    assert.notEqual(after?.boot, before?.boot, 'restarted');

    // A new version: the service follows it by itself (auto update), then is pinned back and moved on.
    await publishAlwaysOn(p, alpha.key, {
      name: 'web',
      description: 'A web app.',
      files: { 'server.mjs': app('v2') },
    });
    await waitFor('v2 answering', async () => ((await ask(web.url!))?.version === 'v2' ? true : undefined));
    const pinned = await json<Service>(['services', 'update', 'web', '--pin', 'v1']);
    assert.deepEqual([pinned.agent_version, pinned.auto_update, pinned.state], ['v1', false, 'running']);
    assert.equal((await ask(web.url!))?.version, 'v1');
    const latest = await json<Service>(['services', 'update', web.id, '--latest', '--min-instances', '2']);
    assert.deepEqual([latest.agent_version, latest.min_instances, latest.state], ['v2', 2, 'running']);
    assert.equal((await ask(web.url!))?.version, 'v2');
    assert.equal((await ask(web.url!))?.greeting, 'hi', 'settings kept across versions');
  });

  it('restarts a service and waits for it', async () => {
    const before = await ask(web.url!);
    const res = await json<Service>(['services', 'restart', 'web']);
    assert.equal(res.state, 'running');
    const after = await ask(web.url!);
    assert.ok(after && before && after.boot !== before.boot, 'a new process');
    const human = await cli(['services', 'restart', 'web', '--no-wait']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^name +web$/m);
    assert.match(human.stdout, /^state +provisioning$/m, '--no-wait returns while it starts');
    await waitFor('running again', async () =>
      (await json<Service>(['services', 'get', 'web'])).state === 'running' ? true : undefined,
    );
  });

  it('fails the wait with the reason when the app crash-loops into a pause, or is too slow', async () => {
    const crash = await cli([
      'services',
      'deploy',
      'svc-alpha/web',
      '--name',
      'crasher',
      '--env',
      'MODE=crash',
      '--max-restart-failures',
      '2',
    ]);
    assert.equal(crash.code, 1, crash.stderr);
    assert.equal(crash.stdout, '');
    assert.match(crash.stderr, /^crasher: provisioning, starting \(/m);
    assert.match(crash.stderr, /^crasher: paused, \w+; 2 failed starts: .*boom/m);
    assert.match(
      crash.stderr,
      /^agenthost: SERVICE_FAILED: service crasher paused \(crash_loop\): .*boom: crashing on purpose.* \(fix: read its output with `agenthost services logs crasher`/m,
    );
    const logs = await cli(['services', 'logs', 'crasher', '--level', 'error']);
    assert.match(logs.stdout, /ERROR +boom: crashing on purpose/);
    assert.equal((await cli(['services', 'delete', 'crasher'])).code, 0);

    const slow = await cli([
      'services',
      'deploy',
      'svc-alpha/web',
      '--name',
      'slow',
      '--env',
      'LISTEN_DELAY_MS=30000',
      '--wait-timeout',
      '1',
    ]);
    assert.equal(slow.code, 1, slow.stderr);
    assert.match(
      slow.stderr,
      /^agenthost: TIMEOUT: service slow is not running after 1 s \(provisioning, starting\) \(fix: it keeps starting in the background/m,
    );
    assert.equal((await json<Service>(['services', 'get', 'slow'])).state, 'provisioning', 'still starting');

    const quick = await json<Service>([
      'services',
      'deploy',
      'svc-alpha/web',
      '--name',
      'quick',
      '--no-wait',
      '--no-auto-update',
    ]);
    assert.equal(quick.state, 'provisioning', '--no-wait answers at once');
    assert.equal(quick.auto_update, false);
    for (const name of ['slow', 'quick']) assert.equal((await cli(['services', 'delete', name])).code, 0);
  });

  it('refuses mistakes, other tenants and missing roles with the documented exit codes', async () => {
    const cases: [string[], string, number, RegExp][] = [
      [
        ['services', 'get', 'nope'],
        alpha.key,
        5,
        /no service nope in workspace .*\(fix: list them with `agenthost services list`/,
      ],
      [['services', 'logs', 'nope'], alpha.key, 5, /no service nope/],
      [['services', 'get', 'web'], bravo.key, 5, /no service web/],
      [['services', 'get', 'web', '-w', alpha.workspaceId], bravo.key, 5, /^agenthost: NOT_FOUND: /],
      [['services', 'deploy', 'svc-free/web'], free.key, 4, /^agenthost: FORBIDDEN: .*Pro/],
      [
        ['services', 'deploy', 'svc-alpha/web'],
        alpha.key,
        3,
        /^agenthost: CONFLICT: A service named web exists/,
      ],
      [
        ['services', 'deploy', 'svc-alpha/chat', '--name', 'chat'],
        alpha.key,
        2,
        /^agenthost: INVALID_INPUT: /,
      ],
      [
        ['services', 'deploy', 'svc-alpha/web', '--name', 'x', '--secret', 'NOT_IN_VAULT'],
        alpha.key,
        2,
        /^agenthost: MISSING_SECRETS: /,
      ],
      [
        ['services', 'deploy', 'svc-alpha/web', '--env', 'GREETING'],
        alpha.key,
        2,
        /--env.*must be KEY=VALUE/,
      ],
      [
        ['services', 'deploy', 'svc-alpha/web', '--min-instances', '0'],
        alpha.key,
        2,
        /must be a whole number from 1 to 100/,
      ],
      [
        ['services', 'deploy', 'svc-alpha/web', '--wait-timeout', 'soon'],
        alpha.key,
        2,
        /--wait-timeout.*must be a whole number/,
      ],
      [['services', 'update', 'web'], alpha.key, 2, /nothing to change \(fix: /],
      [
        ['services', 'update', 'web', '--unset-env', 'NOPE'],
        alpha.key,
        2,
        /the service has no variable NOPE/,
      ],
      [
        ['services', 'update', 'web', '--latest', '--pin', 'v1'],
        alpha.key,
        2,
        /cannot be used with option '--pin/,
      ],
      [['services', 'update', 'web', '--pin', 'latest'], alpha.key, 2, /--pin latest is not a version/],
      [
        ['services', 'logs', 'web', '--level', 'debug'],
        alpha.key,
        2,
        /Allowed choices are info, warn, error/,
      ],
      [['services', 'list', '--limit', '0'], alpha.key, 2, /--limit.*must be a whole number from 1 to 200/],
      [['services', 'list'], 'ahk_wrong', 4, /^agenthost: UNAUTHORIZED: /],
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

    // A member of alpha's workspace reads its services but may not change them.
    await joinWorkspace(p.request, alpha.workspaceId, alpha.key, { key: bravo.key, id: bravo.accountId });
    const asMember = (args: string[]) => cli([...args, '-w', alpha.workspaceId], bravo.key);
    assert.equal((await asMember(['services', 'get', 'web'])).code, 0);
    assert.equal((await asMember(['services', 'logs', 'web'])).code, 0);
    for (const args of [
      ['services', 'delete', 'web'],
      ['services', 'restart', 'web'],
      ['services', 'update', 'web', '--env', 'A=1'],
    ]) {
      const res = await asMember(args);
      assert.equal(res.code, 4, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^agenthost: FORBIDDEN: .*\(fix: ask a workspace owner/);
    }
  });

  it('deletes a service: it stops answering, and is gone', async () => {
    const del = await cli(['services', 'delete', web.id]);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stderr, new RegExp(`^deleted service web \\(${web.id}\\)$`, 'm'));
    assert.equal(await ask(web.url!), undefined, 'the URL no longer answers');
    const gone = await cli(['services', 'get', 'web']);
    assert.equal(gone.code, 5, gone.stderr);
    const listed = await json<{ services: Service[]; total: number }>(['services', 'list']);
    assert.equal(listed.total, 0);
  });
});
