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
import { writeAgentDir } from '../helpers/agent-dir.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli, runCliOnTerminal, spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The CLI as its users run it against the local platform. Each command's success, its
 * --json, and the failures a person must be able to act on (one line, the code, the fix; documented
 * exit codes; no stack trace). The process itself (its version, usage mistakes, an unreachable
 * platform, keys from flags, variables and profiles, a terminal, --stream, logs --follow) as a
 * subprocess; each command's output by its command tree in this process (every --help, the commands
 * against the platform: helpers/cli-in-process.ts says why).
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

describe('the CLI against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  let alpha: { key: string; accountId: string; workspaceId: string };
  let bravo: { key: string; accountId: string; workspaceId: string };
  const envOf = (key: string) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
  });

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-'));
    fake = await startFakeLlm();
    p = await startTestPlatform({
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
      // A second provider, for call --provider.
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    alpha = await p.createAccount('cli-alpha', 'pro');
    bravo = await p.createAccount('cli-bravo', 'pro');
    const dir = await writeAgentDir(home, {
      name: 'greet',
      description: 'Greets someone.',
      supported_providers: ['openai'],
      default_models: { openai: 'gpt-test-mini' },
      prompt_template: 'Say hello to {{who}}',
      input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
      is_public: true,
      allow_local_download: true,
    });
    for (let i = 0; i < 2; i++) {
      const res = await runCliInProcess(['publish', dir], envOf(alpha.key));
      assert.equal(res.code, 0, res.stderr);
    }
  });
  after(async () => {
    await p?.close();
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });

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

  it('calls an agent: data on stdout, the envelope with --json, the newest version without @vN', async () => {
    fake.enqueue({ text: 'Hello, Ada!' });
    const res = await runCliInProcess(
      ['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}'],
      envOf(bravo.key),
    );
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), { text: 'Hello, Ada!' });
    assert.equal(fake.calls.at(-1)?.prompt, 'Say hello to Ada');

    fake.enqueue({ text: 'Hi' });
    const inputFile = join(home, 'input.json');
    await writeFile(inputFile, '{"who":"Grace"}');
    const env = await runCliInProcess(
      ['call', 'cli-alpha/greet@v1', '--input-file', inputFile, '--json'],
      envOf(bravo.key),
    );
    assert.equal(env.code, 0, env.stderr);
    const envelope = JSON.parse(env.stdout) as { data: unknown; metadata: { request_id: string } };
    assert.deepEqual(envelope.data, { text: 'Hi' });
    assert.match(envelope.metadata.request_id, /\S/);
    assert.equal(fake.calls.at(-1)?.prompt, 'Say hello to Grace');
  });

  it('prints the answer as the model writes it with --stream (what a terminal gets), whole with --no-stream', async () => {
    fake.enqueue({ text: 'Hello, Ada!', chunks: ['Hello, ', 'Ada!'], chunkDelayMs: 1500 });
    const cli = spawnCli(
      ['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}', '--stream'],
      envOf(bravo.key),
    );
    // The first piece is on stdout while the model is still writing the second.
    await waitFor(
      'the first piece on stdout',
      () => (cli.stdout() === 'Hello, ' ? true : undefined),
      10_000,
      20,
    );
    assert.equal(await cli.stop().then(() => cli.stdout()), 'Hello, ');
    // (stopped mid-stream: the call was abandoned; the next one runs whole)
    fake.enqueue({ text: 'Hello, Ada!', chunks: ['Hello, ', 'Ada!'], chunkDelayMs: 50 });
    const streamed = await runCliInProcess(
      ['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}', '--stream'],
      envOf(bravo.key),
    );
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.equal(streamed.stdout, 'Hello, Ada!\n');
    fake.enqueue({ text: 'Hello, Ada!', chunks: ['Hello, ', 'Ada!'] });
    const whole = await runCliInProcess(
      ['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}', '--no-stream'],
      envOf(bravo.key),
    );
    assert.equal(whole.code, 0, whole.stderr);
    assert.deepEqual(JSON.parse(whole.stdout), { text: 'Hello, Ada!' });
    assert.notEqual(fake.calls.at(-1)?.body.stream, true, '--no-stream asks the model for the whole answer');
  });

  it('prints a managed loop’s result on a terminal after the model’s last words, and a prompt agent’s text once', async () => {
    // An account of its own: the other tests list alpha's and bravo's agents.
    const author = await p.createAccount('cli-loop', 'pro');
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: author.key,
      body: {
        name: 'tallier',
        type: 'agent',
        description: 'Counts, then submits.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        prompt_template: 'Count the words of {{text}}.',
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string' }, style: { type: 'string', deprecated: true } },
        },
      },
    });
    assert.equal(published.status, 201, published.text);
    // Its last turn both talks and submits: the words stream, the submitted object is the data.
    fake.enqueue({
      text: 'Counted: three words.',
      toolCalls: [{ name: 'submit_result', input: { words: 3, longest: 'three' } }],
    });
    const loop = await runCliOnTerminal(
      ['call', 'cli-loop/tallier', '--input', '{"text":"one two three","style":"terse"}'],
      envOf(author.key),
    );
    assert.equal(loop.code, 0, loop.output);
    // The step's note (stderr), the last words (stdout), the input's warning on a line of its own
    // (stderr), then the result (stdout), on the one terminal.
    const [step, words, warning, ...rest] = loop.output.split('\n');
    assert.match(step ?? '', /^tool submit_result: ok \(\d+ ms\)$/, loop.output);
    assert.equal(words, 'Counted: three words.', loop.output);
    assert.match(warning ?? '', /^warning DEPRECATED_FIELD: style is deprecated/, loop.output);
    assert.equal(rest.join('\n'), `${JSON.stringify({ words: 3, longest: 'three' }, null, 2)}\n`);

    // A prompt agent's data is the streamed text: not printed a second time.
    fake.enqueue({ text: 'Hello, Ada!', chunks: ['Hello, ', 'Ada!'] });
    const prompt = await runCliOnTerminal(
      ['call', 'cli-alpha/greet', '--input', '{"who":"Ada"}'],
      envOf(bravo.key),
    );
    assert.equal(prompt.code, 0, prompt.output);
    assert.equal(prompt.output, 'Hello, Ada!\n');
  });

  it('publishes an agent whose default_endpoint is not run: the printed URL and a call without /endpoint reach it', async () => {
    const dir = await writeAgentDir(home, {
      name: 'brief',
      description: 'Sums a text up.',
      supported_providers: ['openai'],
      default_models: { openai: 'gpt-test-mini' },
      default_endpoint: 'summarize',
      prompt_template: 'Sum up {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      is_public: true,
    });
    // An account of its own: the other tests list alpha's and bravo's agents.
    const author = await p.createAccount('cli-brief', 'pro');
    const published = await runCliInProcess(['publish', dir], envOf(author.key));
    assert.equal(published.code, 0, published.stderr);
    const url = /^url +POST (\S+)$/m.exec(published.stdout)?.[1];
    assert.equal(url, `${p.url}/cli-brief/brief/v1/summarize`);

    // The printed URL answers as printed.
    fake.enqueue({ text: 'Short.' });
    const direct = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${bravo.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'A long text.' }),
    });
    assert.equal(direct.status, 200, await direct.clone().text());
    assert.deepEqual(((await direct.json()) as { data: unknown }).data, { text: 'Short.' });

    // A call naming no endpoint reaches the agent's own, with or without a version.
    for (const ref of ['cli-brief/brief', 'cli-brief/brief@v1']) {
      fake.enqueue({ text: `Short, via ${ref}.` });
      const res = await runCliInProcess(
        ['call', ref, '--input', '{"text":"Another text."}'],
        envOf(bravo.key),
      );
      assert.equal(res.code, 0, `${ref}: ${res.stderr}`);
      assert.deepEqual(JSON.parse(res.stdout), { text: `Short, via ${ref}.` });
      assert.equal(fake.calls.at(-1)?.prompt, 'Sum up Another text.');
    }
    // A named endpoint is taken as named: the agent has no `run`.
    const wrong = await runCliInProcess(
      ['call', 'cli-brief/brief@v1/run', '--input', '{"text":"x"}'],
      envOf(bravo.key),
    );
    assert.equal(wrong.code, 5, wrong.stderr);
    assert.match(wrong.stderr, /^agenthost: NOT_FOUND: .*has no endpoint "run"; it answers \/summarize/m);
  });

  it('call sends its flags to the platform: --file, --metadata, --provider, --model, --skills, --timeout; warnings on stderr', async () => {
    // An account of its own: the other tests list alpha's and bravo's agents.
    const author = await p.createAccount('cli-flags', 'pro');
    const env = envOf(author.key);
    const { mkdir } = await import('node:fs/promises');
    const publishDir = async (name: string, file: string, text: string) => {
      await mkdir(join(home, name));
      await writeFile(join(home, name, file), text);
      const res = await runCliInProcess(['publish', join(home, name)], env);
      assert.equal(res.code, 0, res.stderr);
    };
    await publishDir(
      'reader',
      'agent.json',
      JSON.stringify({
        name: 'reader',
        description: 'Reads files.',
        supported_providers: ['openai', 'anthropic'],
        default_models: { openai: 'gpt-test-mini', anthropic: 'claude-test' },
        prompt_template: 'Read {{files}} for {{purpose}}',
        input_schema: {
          type: 'object',
          properties: {
            purpose: { type: 'string' },
            style: { type: 'string', deprecated: true },
            // The template's {{files}} (docs/calls.md): the platform fills it from the parts.
            files: { type: 'array' },
          },
          required: ['purpose'],
        },
      }),
    );
    await publishDir(
      'terse',
      'SKILL.md',
      '---\nname: terse\ndescription: Answers in one line.\n---\n\nAnswer in one line, never more.\n',
    );
    const notes = join(home, 'notes.txt');
    const figures = join(home, 'figures.csv');
    await writeFile(notes, 'the quarterly numbers went up');
    await writeFile(figures, 'quarter,revenue\nQ3,120');

    // --file twice, --metadata as the input beside them, a chosen provider and model.
    fake.enqueue({ text: 'Read them.' });
    const chosen = await runCliInProcess(
      [
        'call',
        'cli-flags/reader',
        '--file',
        notes,
        '--file',
        figures,
        '--metadata',
        '{"purpose":"a review","style":"terse"}',
        '--provider',
        'anthropic',
        '--model',
        'claude-other',
      ],
      env,
    );
    assert.equal(chosen.code, 0, chosen.stderr);
    assert.deepEqual(JSON.parse(chosen.stdout), { text: 'Read them.' }, 'stdout is the data alone');
    // The input's deprecated field is warned about on stderr, never mixed into the data.
    assert.match(chosen.stderr, /^warning DEPRECATED_FIELD: style is deprecated/m);
    let seen = fake.calls.at(-1);
    assert.equal(seen?.provider, 'anthropic');
    assert.equal(seen?.model, 'claude-other');
    assert.match(seen?.prompt ?? '', /the quarterly numbers went up/);
    assert.match(seen?.prompt ?? '', /Q3,120/);
    assert.match(seen?.prompt ?? '', /for a review$/);

    // Without the flags: the agent's first provider and its default model, and no warning.
    fake.enqueue({ text: 'Read it.' });
    const plain = await runCliInProcess(
      ['call', 'cli-flags/reader', '--file', notes, '--metadata', '{"purpose":"a summary"}'],
      env,
    );
    assert.equal(plain.code, 0, plain.stderr);
    seen = fake.calls.at(-1);
    assert.deepEqual([seen?.provider, seen?.model], ['openai', 'gpt-test-mini']);
    assert.doesNotMatch(plain.stderr, /warning/);
    assert.doesNotMatch(seen?.system ?? '', /## Skill:/);

    // --skills attaches a published skill: its instructions reach the model's system text.
    fake.enqueue({ text: 'One line.' });
    const skilled = await runCliInProcess(
      [
        'call',
        'cli-flags/reader',
        '--file',
        notes,
        '--metadata',
        '{"purpose":"a summary"}',
        '--skills',
        'cli-flags/terse@v1',
      ],
      env,
    );
    assert.equal(skilled.code, 0, skilled.stderr);
    assert.match(
      fake.calls.at(-1)?.system ?? '',
      /## Skill: cli-flags\/terse\n.*Answer in one line, never more/s,
    );

    // --timeout is the platform's deadline: a model slower than it ends the call with TIMEOUT. The
    // header is epoch milliseconds read on the platform's clock, so the test platform's clock (set
    // by hand) reads the real time meanwhile.
    // The model would answer after a minute: a TIMEOUT long before that is the platform's deadline
    // (the bound leaves room for a slow CLI start on a loaded machine).
    fake.enqueue({ text: 'Too late.', delayMs: 60_000 });
    const handSet = p.clock.now();
    p.clock.set(new Date());
    const started = Date.now();
    const late = await runCliInProcess(
      ['call', 'cli-flags/reader', '--file', notes, '--metadata', '{"purpose":"x"}', '--timeout', '0.5'],
      env,
    ).finally(() => p.clock.set(handSet));
    assert.equal(late.code, 1, late.stderr);
    assert.match(late.stderr, /^agenthost: TIMEOUT: /m);
    assert.equal(late.stdout, '');
    assert.ok(Date.now() - started < 30_000, 'the platform gave up at the deadline, not the model');

    const stray = await runCliInProcess(['call', 'cli-flags/reader', '--metadata', '{"purpose":"x"}'], env);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /^agenthost: INVALID_INPUT: --metadata goes with --file/m);
  });

  it('exits with the documented code and one line for each kind of call failure', async () => {
    const cases: [string[], Record<string, string>, number, RegExp][] = [
      [['call', 'cli-alpha/greet@v1', '--input', '{}'], envOf(bravo.key), 2, /^agenthost: INVALID_INPUT: /],
      [
        ['call', 'cli-alpha/greet@v9', '--input', '{"who":"x"}'],
        envOf(bravo.key),
        5,
        /^agenthost: NOT_FOUND: /,
      ],
      [['call', 'cli-alpha/nothing', '--input', '{}'], envOf(bravo.key), 5, /no agent cli-alpha\/nothing/],
      [
        ['call', 'cli-alpha/greet@v1', '--input', '{"who":'],
        envOf(bravo.key),
        2,
        /--input is not JSON.*\(fix: quote it/,
      ],
      [['call', 'cli-alpha/greet@v1', '--input', '{}'], envOf('ahk_wrong'), 4, /^agenthost: UNAUTHORIZED: /],
      [
        ['call', 'cli-alpha/greet@v1', '--timeout', '-1'],
        envOf(bravo.key),
        2,
        /option '--timeout <seconds>' argument '-1' is invalid/,
      ],
      [
        ['call', 'cli-alpha/greet@v1', '--skills', 'a/b@v1', '--no-skills'],
        envOf(bravo.key),
        2,
        /contradict/,
      ],
      [
        ['logs', 'cli-alpha/greet', '--follow', '--interval', 'abc'],
        envOf(alpha.key),
        2,
        /argument 'abc' is invalid/,
      ],
    ];
    for (const [args, env, code, pattern] of cases) {
      const res = await runCliInProcess(args, env);
      assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, pattern, args.join(' '));
      assert.equal(res.stderr.trim().split('\n').length, 1, `one line: ${res.stderr}`);
      assert.equal(res.stdout, '');
    }
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
