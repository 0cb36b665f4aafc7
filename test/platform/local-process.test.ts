import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startPlatformProcess } from '../helpers/process.ts';

async function call(url: string, key: string, method = 'GET', path = '/tasks', body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('the local platform as a process (npm start)', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-proc-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('bootstraps the owner on first start, serves, stops cleanly on SIGTERM and keeps everything across a restart', async () => {
    const first = await startPlatformProcess({ PLATFORM_DATA_DIR: dataDir });
    const printed = /Owner API key[^\n]*\n\s+(ahk_\S+)/.exec(first.stdout())?.[1];
    assert.ok(printed, `the key is printed once:\n${first.stdout()}`);
    const keyFile = join(dataDir, 'admin-api-key');
    assert.equal((await readFile(keyFile, 'utf8')).trim(), printed);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);

    const health = await fetch(`${first.url}/health`);
    assert.equal(health.status, 200);
    const created = await call(first.url, printed, 'POST', '/tasks', { title: 'survives restarts' });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('x-ratelimit-limit'), '10000', 'the owner is pro by default');

    const stopped = await first.stop('SIGTERM');
    assert.equal(stopped.code, 0);
    assert.match(stopped.stdout, /Stopped\./);

    const second = await startPlatformProcess({ PLATFORM_DATA_DIR: dataDir });
    assert.doesNotMatch(second.stdout(), /Owner API key/, 'no new key on a later start');
    const listed = await call(second.url, printed);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 1);
    assert.equal((listed.body.tasks as { title: string }[])[0]?.title, 'survives restarts');
    const byInt = await second.stop('SIGINT');
    assert.equal(byInt.code, 0);
  });

  it('accounts create works while the server runs, and its key works against it', async () => {
    const running = await startPlatformProcess({ PLATFORM_DATA_DIR: dataDir });
    try {
      const res = await runCli(
        ['accounts', 'create', '--org', 'acme', '--tier', 'free', '--email', 'ops@acme.test', '--json'],
        {
          PLATFORM_DATA_DIR: dataDir,
        },
      );
      assert.equal(res.code, 0, res.stderr);
      const out = JSON.parse(res.stdout) as Record<string, string>;
      assert.deepEqual(Object.keys(out).sort(), ['account_id', 'api_key', 'org', 'tier', 'workspace_id']);
      assert.equal(out.org, 'acme');
      const list = await call(running.url, out.api_key as string);
      assert.equal(list.status, 200);
      assert.equal(list.headers.get('x-ratelimit-limit'), '1000');
      const ws = await call(
        running.url,
        out.api_key as string,
        'GET',
        `/workspaces/${out.workspace_id}/tasks`,
      );
      assert.equal(ws.status, 200);

      const dup = await runCli(['accounts', 'create', '--org', 'acme', '--tier', 'pro'], {
        PLATFORM_DATA_DIR: dataDir,
      });
      assert.equal(dup.code, 3);
      assert.match(dup.stderr, /org slug "acme" is taken/);
      const dupEmail = await runCli(
        ['accounts', 'create', '--org', 'acme2', '--tier', 'pro', '--email', 'OPS@acme.test'],
        {
          PLATFORM_DATA_DIR: dataDir,
        },
      );
      assert.equal(dupEmail.code, 3);
      assert.match(dupEmail.stderr, /email/);
      const human = await runCli(['accounts', 'create', '--org', 'beta-team', '--tier', 'team'], {
        PLATFORM_DATA_DIR: dataDir,
      });
      assert.equal(human.code, 0);
      assert.match(human.stdout, /^api key +ahk_/m);
      assert.match(human.stderr, /shown once: store it now/);
    } finally {
      await running.stop();
    }
  });

  it('rejects bad operator input with a clear message and a non-zero exit', async () => {
    for (const [args, pattern] of [
      [['accounts', 'create', '--org', 'tasks', '--tier', 'pro'], /reserved/],
      [['accounts', 'create', '--org', 'Bad_Slug', '--tier', 'pro'], /lowercase/],
      [['accounts', 'create', '--org', 'ok-slug', '--tier', 'gold'], /--tier must be one of/],
      [['accounts', 'create', '--tier', 'pro'], /required option '--org <slug>'/],
      [['accounts', 'create', '--org', 'x1', '--tier', 'pro', '--bogus'], /unknown option '--bogus'/],
      [['frobnicate'], /unknown command 'frobnicate'/],
    ] as const) {
      const res = await runCli([...args], { PLATFORM_DATA_DIR: dataDir });
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, pattern, args.join(' '));
      assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace for a user mistake');
    }
    const badEnv = await runCli(['accounts', 'create', '--org', 'x1', '--tier', 'pro'], { PORT: 'eighty' });
    assert.equal(badEnv.code, 2, 'exit 2: usage (the configuration)');
    assert.match(badEnv.stderr, /Invalid configuration:\n\s+PORT/);
  });

  it('uses PLATFORM_BOOTSTRAP_API_KEY and PLATFORM_BOOTSTRAP_TIER on first start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-proc-boot-'));
    const key = 'my-chosen-owner-key-0123456789';
    try {
      const running = await startPlatformProcess({
        PLATFORM_DATA_DIR: dir,
        PLATFORM_BOOTSTRAP_API_KEY: key,
        PLATFORM_BOOTSTRAP_TIER: 'free',
      });
      assert.ok(!running.stdout().includes(key), 'the configured key is not echoed');
      const res = await call(running.url, key);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit'), '1000');
      await running.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
