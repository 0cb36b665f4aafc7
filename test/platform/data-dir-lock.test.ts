/**
 * One platform per data dir (functions/platform/data-dir-lock.ts), tried as a user would: `npm
 * start` running, then a second `agenthost start` (and `start --emulated`) on the same data dir,
 * an operator's `accounts create` beside it, and a platform killed with SIGKILL.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLI, runCli, startPlatformProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `agenthost start` as its own process; killed if it is still running after `timeoutMs` (today's bug). */
async function startAgain(env: Record<string, string>, args = ['start'], timeoutMs = 30_000) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, PORT: '0', PLATFORM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The pids of `pid`'s descendants, read from /proc. */
async function descendants(pid: number): Promise<{ pid: number; cmdline: string }[]> {
  const all: { pid: number; ppid: number; cmdline: string }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).replaceAll('\0', ' ');
      all.push({ pid: Number(name), ppid, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  const found: { pid: number; cmdline: string }[] = [];
  const walk = (parent: number) => {
    for (const p of all.filter((q) => q.ppid === parent)) {
      found.push(p);
      walk(p.pid);
    }
  };
  walk(pid);
  return found;
}

describe('a data dir has one platform', () => {
  let dataDir: string;
  let npm: ChildProcess | undefined;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-lock-'));
  });
  after(async () => {
    // npm, the shell it runs and node: one process group (detached), gone together.
    if (npm?.pid) {
      try {
        process.kill(-npm.pid, 'SIGKILL');
      } catch {
        // stopped already
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a second start on a data dir in use exits at once naming the data dir and the running platform’s pid and port; accounts create still works', {
    timeout: 120_000,
  }, async () => {
    // As the README starts it: npm, which runs node, which is the platform.
    npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', PLATFORM_DATA_DIR: dataDir, PLATFORM_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    npm.stdout?.on('data', (d) => {
      out += d;
    });
    npm.stderr?.on('data', (d) => {
      out += d;
    });
    const url = await waitFor(
      'npm start to listen',
      () => /listening on (http:\/\/\S+)/.exec(out)?.[1],
      60_000,
    );
    const port = new URL(url).port;
    const platform = (await descendants(npm.pid as number)).find((p) =>
      /^\S*node .*bin\/agenthost\.ts start/.test(p.cmdline),
    );
    assert.ok(platform, 'the node process npm started');

    const second = await startAgain({ PLATFORM_DATA_DIR: dataDir });
    assert.equal(second.code, 3, `${second.stdout}\n${second.stderr}`);
    assert.match(second.stderr, new RegExp(`data dir ${dataDir} is in use`));
    assert.match(second.stderr, new RegExp(`pid ${platform.pid}\\b`), 'the platform’s pid, not npm’s');
    assert.match(second.stderr, new RegExp(`port ${port}\\b`));
    assert.equal(second.stdout, '', 'nothing started: no owner, no scheduler, no services resumed');

    const emulated = await startAgain({ PLATFORM_DATA_DIR: dataDir }, ['start', '--emulated']);
    assert.equal(emulated.code, 3, `${emulated.stdout}\n${emulated.stderr}`);
    assert.match(emulated.stderr, new RegExp(`pid ${platform.pid}\\b`));

    // The operator's command writes the same data dir without the lock.
    const created = await runCli(['accounts', 'create', '--org', 'beside', '--tier', 'free', '--json'], {
      PLATFORM_DATA_DIR: dataDir,
    });
    assert.equal(created.code, 0, created.stderr);
    const key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const listed = await fetch(`${url}/tasks`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(listed.status, 200, 'the running platform serves the new account');

    const stopped = once(npm, 'exit');
    process.kill(platform.pid, 'SIGTERM');
    await stopped;
    assert.match(out, /Stopped\./);
  });

  it('a platform killed with SIGKILL leaves no lock: the next start runs, and holds the lock in its turn', {
    timeout: 120_000,
  }, async () => {
    const env = { PLATFORM_DATA_DIR: dataDir };
    const crashed = await startPlatformProcess(env);
    await crashed.stop('SIGKILL');

    const next = await startPlatformProcess(env);
    try {
      const health = await fetch(`${next.url}/health`);
      assert.equal(health.status, 200);
      const refused = await startAgain(env);
      assert.equal(refused.code, 3, `${refused.stdout}\n${refused.stderr}`);
      assert.match(refused.stderr, new RegExp(`pid ${next.child.pid}\\b`));
      assert.match(refused.stderr, new RegExp(`port ${new URL(next.url).port}\\b`));
    } finally {
      assert.equal((await next.stop()).code, 0);
    }
    // Stopped cleanly: free again at once (startPlatformProcess fails unless it listens).
    const third = await startPlatformProcess(env);
    await third.stop('SIGKILL');
  });
});
