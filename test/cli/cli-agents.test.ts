import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type CliPlatform, startCliPlatform } from '../helpers/cli-platform.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The CLI against the local platform (as cli.test.ts): logging in and whoami, the agent commands
 * (list, show, versions, check, fork, delete), and an agent's logs, followed as they come.
 */

describe('the CLI against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  let alpha: CliPlatform['alpha'];
  let bravo: CliPlatform['bravo'];
  let envOf: CliPlatform['envOf'];
  let platform: CliPlatform | undefined;

  before(async () => {
    platform = await startCliPlatform();
    ({ p, fake, home, alpha, bravo, envOf } = platform);
  });
  after(() => platform?.close());

  it('logs in with a key from stdin into a 0600 config file, and whoami shows the account', async () => {
    const env = { XDG_CONFIG_HOME: join(home, 'cfg'), HOME: home };
    const bad = await runCliInProcess(['login', '--url', p.url], env, { input: 'ahk_not-a-real-key\n' });
    assert.equal(bad.code, 4, bad.stderr);
    assert.match(bad.stderr, /^agenthost: UNAUTHORIZED: .*\(fix: sign in with `agenthost login`/m);
    await assert.rejects(stat(join(home, 'cfg', 'agenthost', 'config.json')), 'a bad key is not saved');

    const ok = await runCliInProcess(['login', '--url', p.url], env, { input: `${alpha.key}\n` });
    assert.equal(ok.code, 0, ok.stderr);
    const file = join(home, 'cfg', 'agenthost', 'config.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      current: string;
      profiles: Record<string, unknown>;
    };
    assert.deepEqual(saved, {
      current: 'default',
      profiles: { default: { url: p.url, api_key: alpha.key } },
    });

    const who = await runCliInProcess(['whoami', '--json'], env);
    assert.equal(who.code, 0, who.stderr);
    const me = JSON.parse(who.stdout) as Record<string, unknown> & { quota: { remaining: number } };
    assert.equal(me.org, 'cli-alpha');
    assert.equal(me.account_id, alpha.accountId);
    assert.equal(me.tier, 'pro');
    assert.equal(me.default_workspace, alpha.workspaceId);
    assert.equal(typeof me.quota.remaining, 'number');
    const human = await runCliInProcess(['whoami'], env);
    assert.match(human.stdout, /^org +cli-alpha$/m);

    // A second profile, chosen per command; the variables override the file.
    const second = await runCliInProcess(['login', '--profile', 'bravo', '--url', p.url], env, {
      input: bravo.key,
    });
    assert.equal(second.code, 0, second.stderr);
    const asBravo = JSON.parse(
      (await runCliInProcess(['whoami', '--json', '--profile', 'bravo'], env)).stdout,
    ) as {
      org: string;
    };
    assert.equal(asBravo.org, 'cli-bravo');
    const viaEnv = JSON.parse(
      (await runCliInProcess(['whoami', '--json'], { ...env, AGENTHOST_API_KEY: alpha.key })).stdout,
    ) as {
      org: string;
    };
    assert.equal(viaEnv.org, 'cli-alpha');

    const out = await runCliInProcess(['logout'], env);
    assert.equal(out.code, 0, out.stderr);
    const gone = await runCliInProcess(['whoami'], env);
    assert.equal(gone.code, 4);
    assert.match(
      gone.stderr,
      /no API key for http:\/\/127\.0\.0\.1:\d+ \(fix: sign in with `agenthost login`/,
    );
  });

  it('lists, shows, versions, checks, forks and deletes agents', async () => {
    const list = await runCliInProcess(['agents', 'list', '--json'], envOf(alpha.key));
    assert.equal(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout) as { agents: { org: string; name: string; version: string }[] };
    assert.deepEqual(
      listed.agents.map((a) => `${a.org}/${a.name}@${a.version}`),
      ['cli-alpha/greet@v2', 'cli-alpha/greet@v1'],
    );
    const table = await runCliInProcess(['agents', 'list'], envOf(alpha.key));
    assert.match(table.stdout, /^AGENT +TYPE +STATUS +ID$/m);
    assert.match(table.stdout, /^cli-alpha\/greet@v2 +prompt /m);

    const got = JSON.parse(
      (await runCliInProcess(['agents', 'get', 'cli-alpha/greet', '--json'], envOf(alpha.key))).stdout,
    ) as {
      version: string;
    };
    assert.equal(got.version, 'v2', 'org/name is the newest version');
    const versions = await runCliInProcess(['agents', 'versions', 'cli-alpha/greet'], envOf(alpha.key));
    assert.match(versions.stdout, /^v2 /m);
    assert.match(versions.stdout, /^v1 /m);
    const check = await runCliInProcess(['agents', 'delete-check', 'cli-alpha/greet@v1'], envOf(alpha.key));
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^can delete +yes$/m);

    // Bravo forks alpha's public agent into its own workspace, then deletes the fork.
    const fork = await runCliInProcess(
      ['agents', 'fork', 'cli-alpha/greet@v1', '--name', 'my-greet', '--json'],
      envOf(bravo.key),
    );
    assert.equal(fork.code, 0, fork.stderr);
    const forked = JSON.parse(fork.stdout) as { org: string; name: string };
    assert.deepEqual([forked.org, forked.name], ['cli-bravo', 'my-greet']);
    // Not bravo's to delete: alpha's agent is not in bravo's workspaces.
    const notYours = await runCliInProcess(['agents', 'delete', 'cli-alpha/greet@v1'], envOf(bravo.key));
    assert.equal(notYours.code, 5, notYours.stderr);
    const del = await runCliInProcess(
      ['agents', 'delete', 'cli-bravo/my-greet', '--all-versions'],
      envOf(bravo.key),
    );
    assert.equal(del.code, 0, del.stderr);
    const after = JSON.parse(
      (await runCliInProcess(['agents', 'list', '--json'], envOf(bravo.key))).stdout,
    ) as {
      agents: unknown[];
    };
    assert.deepEqual(after.agents, []);
  });

  it('shows an agent’s logs to its owner, and follows new lines as they come', async () => {
    fake.enqueue({ text: 'one' });
    assert.equal(
      (await runCliInProcess(['call', 'cli-alpha/greet@v2', '--input', '{"who":"A"}'], envOf(bravo.key)))
        .code,
      0,
    );
    const logs = await runCliInProcess(['logs', 'cli-alpha/greet@v2'], envOf(alpha.key));
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\S+Z INFO +call \S+ succeeded/m);
    const json = JSON.parse(
      (await runCliInProcess(['logs', 'cli-alpha/greet@v2', '--json'], envOf(alpha.key))).stdout,
    ) as {
      logs: unknown[];
      next_cursor: string | null;
    };
    assert.equal(json.logs.length, logs.stdout.trim().split('\n').length, 'the same lines');
    assert.ok(
      json.logs.every(
        (l) =>
          Object.keys(l as object)
            .sort()
            .join() === 'level,message,request_id,timestamp',
      ),
    );

    // The clock is the test platform's: move it so the next call's line is newer.
    p.clock.advance(1000);
    const follow = spawnCli(
      ['logs', 'cli-alpha/greet@v2', '--follow', '--interval', '0.2', '--json'],
      envOf(alpha.key),
    );
    try {
      await waitFor('the first line', () =>
        follow.stdout().split('\n').filter(Boolean).length >= 1 ? true : undefined,
      );
      fake.enqueue({ text: 'two' });
      assert.equal(
        (await runCliInProcess(['call', 'cli-alpha/greet@v2', '--input', '{"who":"B"}'], envOf(bravo.key)))
          .code,
        0,
      );
      const before = json.logs.length;
      const lines = await waitFor('the new line', () => {
        const l = follow.stdout().split('\n').filter(Boolean);
        return l.length > before ? l : undefined;
      });
      // Give a further poll the chance to print a line twice.
      await new Promise((r) => setTimeout(r, 600));
      const parsed = follow
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { timestamp: string; message: string });
      assert.equal(parsed.length, before + 1, `each line once: ${lines.join('\n')}`);
      assert.ok(parsed.at(-2)!.timestamp < parsed.at(-1)!.timestamp, 'oldest first, the new line last');
    } finally {
      await follow.stop();
    }
    // Another account may not read them.
    const denied = await runCliInProcess(['logs', 'cli-alpha/greet@v2'], envOf(bravo.key));
    assert.equal(denied.code, 5, denied.stderr);
  });
});
