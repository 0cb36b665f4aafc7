import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { CliContext } from '../../functions/cli/cli-context.ts';
import { type LogQuery, showLogs } from '../../functions/cli/log-follow.ts';
import { buildProgram } from '../../functions/cli/program.ts';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { runCli } from '../helpers/process.ts';

/**
 * The CLI as its users run it against the local platform. Each command's success, its
 * --json, and the failures a person must be able to act on (one line, the code, the fix; documented
 * exit codes; no stack trace). The process itself (its version, usage mistakes, an unreachable
 * platform, keys from flags, variables and profiles, a terminal, --stream, logs --follow) as a
 * subprocess; each command's output by its command tree in this process (every --help, the commands
 * against the platform: helpers/cli-in-process.ts says why). Here what needs no platform; the
 * call command in cli-calls.test.ts; logging in, the agent commands and logs in cli-agents.test.ts.
 */

/** Every command path of the CLI, from its own tree. */
function commandPaths(): string[][] {
  const { program } = buildProgram(
    { env: {}, stdout: { write: () => true }, stderr: { write: () => true }, stdin: process.stdin },
    '0.0.0',
  );
  const out: string[][] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      out.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return out;
}

describe('the CLI without a platform', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-home-'));
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('answers --help on every command and subcommand without running anything', async () => {
    const dataDir = join(home, 'must-not-exist');
    const paths = commandPaths();
    assert.ok(paths.length >= 12, `${paths.length} commands`);
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), PLATFORM_DATA_DIR: dataDir };
    for (let i = 0; i < paths.length; i += 4) {
      await Promise.all(
        paths.slice(i, i + 4).map(async (path) => {
          const res = await runCliInProcess([...path, '--help'], env);
          assert.equal(res.code, 0, `${path.join(' ')} --help: ${res.stderr}`);
          assert.match(res.stdout, new RegExp(`^Usage: agenthost ${path.join(' ')}`), path.join(' '));
          assert.equal(res.stderr, '');
        }),
      );
    }
    await assert.rejects(stat(dataDir), 'start --help created no data dir');
    await assert.rejects(stat(join(home, 'config')), 'no config file was written');
  });

  it('prints its version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const res = await runCli(['--version'], {});
    assert.equal(res.code, 0);
    assert.equal(res.stdout.trim(), pkg.version);
  });

  it('fails on usage mistakes with one line and exit 2', async () => {
    for (const args of [
      ['frobnicate'],
      ['call'],
      ['agents', 'list', '--bogus'],
      ['call', 'not a ref', '--input', '{}'],
    ]) {
      const res = await runCli(args, {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        AGENTHOST_API_KEY: 'ahk_x',
      });
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  it('names the URL and the fix when the platform cannot be reached; a stack only with --debug', async () => {
    const url = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const env = {
      AGENTHOST_URL: url,
      AGENTHOST_API_KEY: 'ahk_anything',
      XDG_CONFIG_HOME: join(home, 'config'),
    };
    const res = await runCli(['agents', 'list'], env);
    assert.equal(res.code, 1);
    assert.equal(
      res.stderr.trim(),
      `agenthost: UNREACHABLE: cannot reach agenthost at ${url}: connection refused (fix: start it with \`agenthost start\`, or point the CLI at it with --url, AGENTHOST_URL or \`agenthost login --url\`)`,
    );
    const debug = await runCli(['agents', 'list', '--debug'], env);
    assert.match(debug.stderr, /TypeError: fetch failed/, 'the error with --debug');
    assert.match(debug.stderr, /connect ECONNREFUSED .*\n\s+at /, 'and its cause with its stack');
    assert.ok(!`${res.stderr}${debug.stderr}`.includes('ahk_anything'), 'the key is never printed');
  });

  it('sends a key only where it belongs: flags over variables over the profile, whose key goes to its own URL', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"agents":[],"total":0}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const here = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cfg = join(home, 'precedence');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(cfg, 'agenthost'), { recursive: true });
    await writeFile(
      join(cfg, 'agenthost', 'config.json'),
      JSON.stringify({
        current: 'prod',
        profiles: {
          prod: { url: 'https://agenthost.example.invalid', api_key: 'ahk_PRODKEY_should_stay_home' },
        },
      }),
    );
    const env = { XDG_CONFIG_HOME: cfg, HOME: home };
    try {
      // Another URL than the profile's: the profile's key is not sent there.
      const stray = await runCli(['agents', 'list'], { ...env, AGENTHOST_URL: here });
      assert.equal(stray.code, 4, stray.stderr);
      assert.match(stray.stderr, new RegExp(`no API key for ${here}`));
      assert.deepEqual(seen, [], 'nothing was sent');
      // A key given with it is sent; the flag wins over the variable.
      const flagged = await runCli(['agents', 'list', '--api-key', 'ahk_from_the_flag'], {
        ...env,
        AGENTHOST_URL: here,
        AGENTHOST_API_KEY: 'ahk_from_the_variable',
      });
      assert.equal(flagged.code, 0, flagged.stderr);
      const byVariable = await runCli(['agents', 'list'], {
        ...env,
        AGENTHOST_URL: here,
        AGENTHOST_API_KEY: 'ahk_from_the_variable',
      });
      assert.equal(byVariable.code, 0, byVariable.stderr);
      assert.deepEqual(seen, ['Bearer ahk_from_the_flag', 'Bearer ahk_from_the_variable']);
      // A profile named on purpose must exist.
      const typo = await runCli(['agents', 'list'], { ...env, AGENTHOST_PROFILE: 'prd' });
      assert.equal(typo.code, 2, typo.stderr);
      assert.match(typo.stderr, /no profile named prd/);
      const proto = await runCli(['agents', 'list', '--profile', 'constructor'], env);
      assert.equal(proto.code, 2, proto.stderr);
      // A key that is not one (two pasted keys) is refused without being echoed.
      const twoKeys = await runCli(['login', '--url', here], env, {
        input: 'ahk_FIRSTSECRETKEY\nahk_SECONDSECRETKEY\n',
      });
      assert.equal(twoKeys.code, 2, twoKeys.stderr);
      assert.ok(
        !twoKeys.stderr.includes('FIRSTSECRET') && !twoKeys.stderr.includes('SECONDSECRET'),
        twoKeys.stderr,
      );
      // A broken config file is a usage error naming the file.
      await writeFile(join(cfg, 'agenthost', 'config.json'), '{not json');
      const broken = await runCli(['agents', 'list'], {
        ...env,
        AGENTHOST_URL: here,
        AGENTHOST_API_KEY: 'ahk_x1',
      });
      assert.equal(broken.code, 2, broken.stderr);
      assert.match(broken.stderr, /config file .*config\.json is not JSON \(fix: /);
      const badUrl = await runCli(['agents', 'list', '--url', 'localhost:8787'], {
        AGENTHOST_API_KEY: 'ahk_x1',
      });
      assert.equal(badUrl.code, 2, badUrl.stderr);
    } finally {
      server.close();
    }
  });

  it('prints a bash completion script that completes commands and options', async () => {
    const res = await runCli(['completion', 'bash'], {});
    assert.equal(res.code, 0, res.stderr);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `eval "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _agenthost; echo "\${COMPREPLY[*]}"`,
          'bash',
          res.stdout,
        ],
        { encoding: 'utf8' },
      ).trim();
    assert.equal(complete(['agenthost', 'ag']), 'agents');
    assert.deepEqual(complete(['agenthost', 'agents', 'de']).split(' ').sort(), ['delete', 'delete-check']);
    assert.match(complete(['agenthost', 'call', 'x', '--in']), /--input/);
  });
});

describe('logs --follow (functions/cli/log-follow.ts), in process', () => {
  it('prints each line once, repeated lines as often as they were written, and lines written late', async () => {
    let out = '';
    const ctx = new CliContext(
      {
        env: {},
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: () => true },
        stdin: process.stdin,
      },
      {},
    );
    const line = (timestamp: string, message: string) => ({
      timestamp,
      level: 'info',
      message,
      request_id: null,
    });
    // What the server holds, newest first, as each poll finds it.
    const polls = [
      [
        line('2026-06-15T12:00:01.000Z', 'tick'),
        line('2026-06-15T12:00:01.000Z', 'tick'),
        line('2026-06-15T12:00:00.000Z', 'start'),
      ],
      [
        line('2026-06-15T12:00:02.000Z', 'b'),
        line('2026-06-15T12:00:01.000Z', 'tick'),
        line('2026-06-15T12:00:01.000Z', 'tick'),
        line('2026-06-15T12:00:01.000Z', 'tick'),
        line('2026-06-15T12:00:00.500Z', 'late'),
        line('2026-06-15T12:00:00.000Z', 'start'),
      ],
    ];
    const queries: LogQuery[] = [];
    const STOP = new Error('stop');
    await assert.rejects(
      showLogs(
        ctx,
        async (q) => {
          queries.push(q);
          const page = polls[queries.length - 1];
          if (!page) throw STOP;
          return { logs: page.filter((l) => !q.since || l.timestamp >= q.since), next_cursor: null };
        },
        { follow: true, interval: 0.2 },
      ),
      STOP,
    );
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((l) => l.replace(/^\S+ INFO +/, '')),
      ['start', 'tick', 'tick', 'late', 'tick', 'b'],
    );
    assert.equal(
      queries[1]?.since,
      '2026-06-15T11:59:31.000Z',
      'a poll looks 30 s back from the newest line',
    );
  });
});
