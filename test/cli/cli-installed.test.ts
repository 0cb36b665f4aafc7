import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ENV } from '../../functions/shared/env-names.ts';
import { packCli } from '../../scripts/cli-pack.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { machineNode } from '../helpers/machine-node.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The CLI as a user installs it: `npm run cli:pack`'s tarball installed with
 * `npm install -g --prefix` into a temporary prefix, offline, and run from a directory outside the
 * clone, both on the machine's own Node (20 on the project's machines: it runs no TypeScript) and on
 * the pinned one. Its help and version, commands against a platform, init's next steps run as
 * printed, and the commands that run in the clone (start, run) through it.
 */

const run = promisify(execFile);

const pinned = process.execPath;
const machine = machineNode();
/** Each Node the installed CLI is run on, once each (the machine's may be the pinned one). */
const nodes = [...(machine && realpathSync(machine) !== realpathSync(pinned) ? [machine] : []), pinned];

describe('the installed CLI (npm run cli:pack, npm install -g)', () => {
  let home: string;
  let prefix: string;
  let work: string;
  let fake: FakeLlmProviders;
  let p: TestPlatform;
  let user: { key: string };
  let llmEnv: Record<string, string>;

  /**
   * The environment a user's shell gives it: `node` on PATH is `node`'s (`#!/usr/bin/env node`
   * finds it), then the prefix's bin; no node_modules/.bin, no npm variables.
   */
  const shellEnv = (node: string, extra: Record<string, string> = {}) => {
    const env: Record<string, string> = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
      PATH: [dirname(node), join(prefix, 'bin'), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter),
      [ENV.logLevel]: 'warn',
      // npm test's shared code cache (test/setup/run.ts), for the clone's CLI that start and run use.
      ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}),
      ...extra,
    };
    return env;
  };
  const agenthost = async (
    node: string,
    args: string[],
    extra: Record<string, string> = {},
    cwd = work,
  ): Promise<{ code: number; stdout: string; stderr: string }> => {
    const child = spawn(join(prefix, 'bin', 'agenthost'), args, {
      cwd,
      env: shellEnv(node, extra),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return collect(child);
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-installed-'));
    prefix = join(home, 'prefix');
    work = join(home, 'work');
    await mkdir(work);
    const tarball = await packCli(home);
    assert.match(tarball, /agenthost-cli-\d+\.\d+\.\d+\.tgz$/);
    // Offline: the package has no dependencies to fetch.
    await run(
      'npm',
      ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      {
        env: { ...process.env, npm_config_update_notifier: 'false' },
      },
    );
    fake = await startFakeLlm();
    llmEnv = { [ENV.openaiApiKey]: 'sk-openai-test', [ENV.openaiBaseUrl]: fake.baseUrls.openai };
    p = await startTestPlatform(llmEnv);
    user = await p.createAccount('installed', 'pro');
  });
  after(async () => {
    await p?.close();
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('is compiled JavaScript with no dependencies, private, and names the clone it was packed from', async () => {
    const pkgDir = join(prefix, 'lib', 'node_modules', 'agenthost-cli');
    const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    const root = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    assert.equal(pkg.version, root.version);
    assert.equal(pkg.private, true, 'never published');
    assert.equal(pkg.dependencies, undefined, 'installs offline');
    assert.deepEqual(pkg.bin, { agenthost: 'bin/agenthost.js' });
    const clone = realpathSync(new URL('../..', import.meta.url));
    assert.deepEqual(pkg.agenthost, { clone, owner: (await stat(clone)).uid });
    const bin = await readFile(join(pkgDir, 'bin', 'agenthost.js'), 'utf8');
    assert.match(bin, /^#!\/usr\/bin\/env node\n/);
  });

  for (const node of nodes) {
    it(`prints its help and version, and talks to a platform, from any directory, on ${node}`, async () => {
      const { stdout: nodeVersion } = await run(node, ['--version']);
      const help = await agenthost(node, ['--help']);
      assert.equal(help.code, 0, `${nodeVersion}: ${help.stderr}`);
      assert.match(help.stdout, /^Usage: agenthost /);
      const version = await agenthost(node, ['--version']);
      assert.equal(version.code, 0, version.stderr);
      assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
      const who = await agenthost(node, ['whoami', '--json'], {
        AGENTHOST_URL: p.url,
        AGENTHOST_API_KEY: user.key,
      });
      assert.equal(who.code, 0, `${nodeVersion}: ${who.stderr}`);
      assert.equal((JSON.parse(who.stdout) as { org: string }).org, 'installed');
      // A failure is the one documented line, not a stack.
      const missing = await agenthost(node, ['agents', 'get', 'installed/nothing'], {
        AGENTHOST_URL: p.url,
        AGENTHOST_API_KEY: user.key,
      });
      assert.equal(missing.code, 5, missing.stderr);
      assert.match(missing.stderr, /^agenthost: NOT_FOUND: /);
    });
  }

  it('runs from the clone’s own bin on any Node too: npx --prefix <clone> agenthost', async () => {
    const node = nodes[0] as string;
    const root = realpathSync(new URL('../..', import.meta.url));
    // An npx cache of its own: npx installs the local package there, bin links and all.
    const child = spawn(
      'npm',
      ['exec', '--offline', '--ignore-scripts', '--prefix', root, '--', 'agenthost', '--version'],
      {
        cwd: work,
        env: shellEnv(node, { npm_config_cache: join(home, 'npm-cache') }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const res = await collect(child);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  it('runs init’s next steps as printed: run (in the clone), publish and call', async () => {
    const node = nodes[0] as string;
    const env = { AGENTHOST_URL: p.url, AGENTHOST_API_KEY: user.key, ...llmEnv };
    const init = await agenthost(node, ['init', '--type', 'prompt', 'explainer']);
    assert.equal(init.code, 0, init.stderr);
    const step = (name: string) => {
      const line = new RegExp(`^ {2}${name} it: +(.+)$`, 'm').exec(init.stderr)?.[1];
      assert.ok(line, `${name}: ${init.stderr}`);
      assert.doesNotMatch(line, /npx|npm/);
      return line;
    };
    // Each as a user's shell runs it: copied from the terminal into `sh -c`, in the same directory.
    const shell = async (line: string) => {
      const child = spawn('sh', ['-c', line], {
        cwd: work,
        env: shellEnv(node, env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return collect(child);
    };
    fake.enqueue({ text: 'Light scatters.' });
    const ran = await shell(step('run'));
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout), { text: 'Light scatters.' });
    const published = await shell(step('publish'));
    assert.equal(published.code, 0, published.stderr);
    assert.match(published.stdout, /^published +installed\/explainer@v1$/m);
    fake.enqueue({ text: 'Blue light scatters most.' });
    const called = await shell(step('call').replace('<org>', 'installed'));
    assert.equal(called.code, 0, called.stderr);
    assert.deepEqual(JSON.parse(called.stdout), { text: 'Blue light scatters most.' });
  });

  it('starts the platform from the clone, and stops it on SIGTERM', async (t) => {
    const dataDir = join(home, 'data');
    const child = spawn(join(prefix, 'bin', 'agenthost'), ['start'], {
      cwd: work,
      env: shellEnv(nodes[0] as string, { PORT: '0', [ENV.dataDir]: dataDir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    // A failed step must not leave the platform running: the file would never end.
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    // A bound, not a pace: the first start on a loaded machine reads the compile cache cold.
    const url = await waitFor('the platform’s URL', () => /listening on (http:\S+)/.exec(out)?.[1], 60_000);
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 200);
    child.kill('SIGTERM');
    const ended = await done;
    assert.equal(ended.code, 0, ended.stderr);
    await assert.rejects(fetch(`${url}/health`), 'the platform stopped with the CLI');
  });

  /**
   * The installed CLI as if packed from `clone` when `owner` owned it: a copy of the package, its
   * package.json rewritten. Answers a function that runs it on the machine's Node.
   */
  let copies = 0;
  const packedFrom = async (clone: string, owner: number) => {
    const copy = join(home, `cli-copy-${++copies}`);
    await cp(join(prefix, 'lib', 'node_modules', 'agenthost-cli'), copy, { recursive: true });
    const pkgFile = join(copy, 'package.json');
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8')) as {
      agenthost: { clone: string; owner: number };
    };
    pkg.agenthost = { clone, owner };
    await writeFile(pkgFile, JSON.stringify(pkg));
    return (args: string[], extra: Record<string, string> = {}) =>
      collect(
        spawn(join(copy, 'bin', 'agenthost.js'), args, {
          cwd: work,
          env: shellEnv(nodes[0] as string, { PORT: '0', [ENV.dataDir]: join(home, 'never'), ...extra }),
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
  };
  /** A directory at a clone's path whose "pinned Node" writes its arguments to $MARK and exits 7. */
  const fakeClone = async (path: string, withNode = true) => {
    await mkdir(join(path, 'bin'), { recursive: true });
    await writeFile(join(path, 'bin', 'agenthost.ts'), '');
    if (withNode) {
      await mkdir(join(path, 'node_modules', 'node', 'bin'), { recursive: true });
      await writeFile(
        join(path, 'node_modules', 'node', 'bin', 'node'),
        '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$MARK"\nexit 7\n',
        {
          mode: 0o755,
        },
      );
    }
    return (await stat(path)).uid;
  };

  it('says which clone is missing, and how to fix it, when the commands that run there cannot', async () => {
    const gone = join(home, 'gone');
    const res = await (await packedFrom(gone, process.getuid?.() ?? 0))(['start']);
    assert.equal(res.code, 2, res.stderr);
    assert.equal(
      res.stderr,
      `agenthost: INVALID_INPUT: agenthost start runs the platform from the clone this CLI was packed from, and ${gone} holds none (fix: pack and install the CLI again from your clone: npm run cli:install there (docs/cli.md "Install"))\n`,
    );

    // A clone at a path with spaces and quotes, without its node_modules: the fix runs as copied.
    const bare = join(home, `my "clone" it's`);
    const owner = await fakeClone(bare, false);
    const res2 = await (await packedFrom(bare, owner))(['run', '.']);
    assert.equal(res2.code, 2, res2.stderr);
    const fix = /\(fix: (cd .+) && npm install\)\n$/.exec(res2.stderr)?.[1];
    assert.ok(fix, res2.stderr);
    const pwd = await collect(
      spawn('sh', ['-c', `${fix} && pwd`], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    assert.equal(pwd.stdout, `${bare}\n`, pwd.stderr);
  });

  it('runs the clone’s code with the arguments as given, only while who owned the clone when packed owns it still', async () => {
    // The clone removed from a shared directory and made again there by someone else, or handed
    // over: whoever owns it now is not who the CLI was packed from.
    const clone = join(home, 'shared clone');
    const owner = await fakeClone(clone);
    const mark = join(home, 'ran');
    const args = ['run', 'my dir', '--input', `{"it's":"a \\"b\\" c"}`];
    const foreign = await (await packedFrom(clone, owner + 1))(args, { MARK: mark });
    assert.equal(foreign.code, 4, foreign.stderr);
    assert.match(
      foreign.stderr,
      new RegExp(
        `^agenthost: FORBIDDEN: agenthost run runs the platform from the clone this CLI was packed from, ${clone}, which user ${owner + 1} owned then and user ${owner} owns now: its code is not run \\(fix: pack and install the CLI again`,
      ),
    );
    await assert.rejects(stat(mark), 'nothing of the clone ran');

    // Owned as packed: its pinned Node runs the clone's CLI with the arguments, its exit code the CLI's.
    const own = await (await packedFrom(clone, owner))(args, { MARK: mark });
    assert.equal(own.code, 7, own.stderr);
    assert.deepEqual((await readFile(mark, 'utf8')).split('\n').slice(0, -1), [
      '--max-semi-space-size=16',
      join(clone, 'bin', 'agenthost.ts'),
      ...args,
    ]);
  });
});

async function collect(
  child: ReturnType<typeof spawn>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}
