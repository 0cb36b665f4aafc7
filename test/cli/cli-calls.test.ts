import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeAgentDir } from '../helpers/agent-dir.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import { type CliPlatform, startCliPlatform } from '../helpers/cli-platform.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { runCliOnTerminal, spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The CLI's call command against the local platform (as cli.test.ts): its output, --json, --stream
 * on a terminal, the flags it sends, and each kind of failure's exit code and line.
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
});
