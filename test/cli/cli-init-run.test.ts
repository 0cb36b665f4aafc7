import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parseSecretsFile } from '../../functions/cli/secrets-file.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { runCliInProcess } from '../helpers/cli-in-process.ts';
import {
  type FakeLlmCall,
  type FakeLlmProviders,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli, spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * `agenthost init` and `agenthost run`: every type init writes publishes and answers as
 * written (prompt and agent through the fake LLM, tool in the bubblewrap sandbox, the service
 * deployed, the skill published and attached), and `run` gives the same answer from the directory
 * without publishing, with the platform's input validation and secrets rule. Each command by the
 * CLI's command tree in this process (helpers/cli-in-process.ts says why), but for what needs its
 * own process: init in another working directory, and a service's run stopped by a signal.
 */

const SKY_PROMPT =
  'Explain why the sky is blue in two or three plain sentences for a curious reader. Reply with the explanation only.';
const AGENT_TEXT = 'Agents are programs that use a model and tools to finish a task.';

/** The scripted model of the agent starter: count_words first, then submit_result with its count. */
function agentModel(call: FakeLlmCall) {
  if (call.provider !== 'anthropic' || !call.tools.includes('count_words')) return undefined;
  const counted = call.toolResults.map((r) => /"words":\s*(\d+)/.exec(r.content)?.[1]).find(Boolean);
  if (!counted) return { toolCalls: [{ name: 'count_words', input: { text: AGENT_TEXT } }] };
  return {
    toolCalls: [{ name: 'submit_result', input: { words: Number(counted), summary: 'Agents use tools.' } }],
  };
}

describe('agenthost init and run', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let home: string;
  let author: { key: string; accountId: string; workspaceId: string };
  /** What the CLI needs to reach the fake models, as the platform reads it: for `run`. */
  let llmEnv: Record<string, string>;
  let env: Record<string, string>;
  const dirOf = (name: string) => join(home, name);

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-init-run-'));
    fake = await startFakeLlm();
    llmEnv = {
      [ENV.openaiApiKey]: 'sk-openai-test',
      [ENV.openaiBaseUrl]: fake.baseUrls.openai,
      [ENV.anthropicApiKey]: 'sk-ant-test',
      [ENV.anthropicBaseUrl]: fake.baseUrls.anthropic,
    };
    p = await startTestPlatform(llmEnv);
    author = await p.createAccount('authors', 'pro');
    // `run` needs no platform at all: no URL and no key, only the model settings.
    env = { XDG_CONFIG_HOME: join(home, 'config'), ...llmEnv };
  });
  beforeEach(() => fake.reset());
  after(async () => {
    await p?.close();
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });

  const platformEnv = () => ({ ...env, AGENTHOST_URL: p.url, AGENTHOST_API_KEY: author.key });
  const init = async (type: string, name: string) => {
    const res = await runCliInProcess(['init', '--type', type, dirOf(name)], env);
    assert.equal(res.code, 0, res.stderr);
    return res;
  };
  const publish = async (name: string, ...flags: string[]) => {
    const res = await runCliInProcess(['publish', dirOf(name), ...flags], platformEnv());
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`^published +authors/${name}@v1$`, 'm'));
    return res;
  };
  const callJson = async (ref: string, ...args: string[]) => {
    const res = await runCliInProcess(['call', ref, ...args], platformEnv());
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as Record<string, unknown>;
  };
  const runJson = async (name: string, ...args: string[]) => {
    const res = await runCliInProcess(['run', dirOf(name), ...args], env);
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as Record<string, unknown>;
  };

  it('init writes the files of each type, with --name, as JSON with --json', async () => {
    const res = await init('prompt', 'explainer');
    assert.match(res.stdout, new RegExp(`^created +explainer \\(prompt\\) in ${dirOf('explainer')}$`, 'm'));
    assert.match(res.stdout, /^files +README\.md, agent\.json, input\.json$/m);
    assert.match(res.stderr, /publish it: +cd .*explainer && agenthost publish \.$/m, 'next steps on stderr');
    const manifest = JSON.parse(await readFile(join(dirOf('explainer'), 'agent.json'), 'utf8'));
    assert.equal(manifest.name, 'explainer', 'named for its directory');
    assert.equal(manifest.type, 'prompt');

    const named = await runCliInProcess(
      ['init', '--type', 'agent', '--name', 'word-reader', dirOf('some-dir'), '--json'],
      env,
    );
    assert.equal(named.code, 0, named.stderr);
    const out = JSON.parse(named.stdout) as { name: string; type: string; files: string[] };
    assert.deepEqual(out, {
      name: 'word-reader',
      type: 'agent',
      dir: dirOf('some-dir'),
      files: ['README.md', 'agent.json', 'input.json', 'tools/count-words.js'],
    });
    assert.equal(named.stderr, '', '--json prints the document only');
    const readme = await readFile(join(dirOf('some-dir'), 'README.md'), 'utf8');
    assert.match(readme, /agenthost publish \. --allow-no-secrets/);

    // Without DIR: a new directory named for the agent, in the working directory.
    const cwd = join(home, 'cwd');
    await mkdir(cwd);
    const bare = await runCli(['init', '--type', 'skill', '--name', 'plain-words'], env, { cwd });
    assert.equal(bare.code, 0, bare.stderr);
    assert.match(await readFile(join(cwd, 'plain-words', 'SKILL.md'), 'utf8'), /^name: plain-words$/m);
    const byType = await runCli(['init', '--type', 'service'], env, { cwd });
    assert.equal(byType.code, 0, byType.stderr);
    assert.equal(
      JSON.parse(await readFile(join(cwd, 'my-service', 'agent.json'), 'utf8')).name,
      'my-service',
    );
  });

  it('init refuses to overwrite files (exit 2) unless --force, and names that the platform refuses', async () => {
    await init('tool', 'keep-me');
    const index = join(dirOf('keep-me'), 'index.js');
    await writeFile(index, '// my own work\n');
    const again = await runCliInProcess(['init', '--type', 'tool', dirOf('keep-me')], env);
    assert.equal(again.code, 2, again.stderr);
    assert.match(
      again.stderr,
      /already has agent\.json, index\.js, input\.json, README\.md; nothing was written \(fix: .*--force\)/,
    );
    assert.equal(await readFile(index, 'utf8'), '// my own work\n', 'left as it was');
    const forced = await runCliInProcess(['init', '--type', 'tool', dirOf('keep-me'), '--force'], env);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(await readFile(index, 'utf8'), /process\.stdin/);

    const badName = await runCliInProcess(['init', '--name', 'Bad_Name', dirOf('bad')], env);
    assert.equal(badName.code, 2);
    assert.match(
      badName.stderr,
      /^agenthost: INVALID_INPUT: the agent name "Bad_Name" must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit \(fix: pass another --name\)$/m,
    );
    const badDir = await runCliInProcess(['init', dirOf('My Agent')], env);
    assert.equal(badDir.code, 2);
    assert.match(badDir.stderr, /"My Agent" must be .*\(fix: name it with --name, e\.g\. --name my-agent\)/);
    await assert.rejects(stat(dirOf('My Agent')), 'nothing was created');
    const badType = await runCliInProcess(['init', '--type', 'robot', dirOf('robot')], env);
    assert.equal(badType.code, 2);
    assert.match(badType.stderr, /Allowed choices are prompt, tool, agent, skill, service/);
    await writeFile(dirOf('a-file'), 'x');
    const onFile = await runCliInProcess(['init', dirOf('a-file')], env);
    assert.equal(onFile.code, 2);
    assert.match(onFile.stderr, /is not a directory/);
  });

  it('prompt: publishes and answers through the model; run gives the same answer without publishing', async () => {
    await init('prompt', 'sky');
    await publish('sky');
    const called = await callJson('authors/sky', '--input-file', join(dirOf('sky'), 'input.json'));
    assert.deepEqual(called, { text: `echo: ${SKY_PROMPT}` });
    assert.equal(fake.calls.at(-1)?.prompt, SKY_PROMPT);
    const platformProvider = fake.calls.at(-1)?.provider;

    fake.reset();
    const ran = await runCliInProcess(
      ['run', dirOf('sky'), '--input-file', join(dirOf('sky'), 'input.json')],
      env,
    );
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout), called, 'the same data as the platform’s');
    const sent = fake.calls.at(-1);
    // `any`: the first provider the environment configures (anthropic, then openai, …), as the platform picks.
    assert.equal(sent?.provider, 'anthropic');
    assert.equal(sent?.provider, platformProvider);
    assert.equal(sent?.prompt, SKY_PROMPT);
    assert.equal(sent?.system, 'Explains a topic in two or three plain sentences.');
    assert.equal(sent?.headers['x-api-key'], 'sk-ant-test', 'with the environment’s key');

    fake.reset();
    const viaOpenai = await runJson('sky', '--provider', 'openai');
    assert.deepEqual(viaOpenai, called);
    assert.equal(fake.calls.at(-1)?.provider, 'openai');
    assert.equal(fake.calls.at(-1)?.headers.authorization, 'Bearer sk-openai-test');

    // Without --input: DIR/input.json; --json: the whole envelope, as `call --json`.
    const envelope = await runJson('sky', '--json', '--model', 'gpt-local-test');
    assert.deepEqual(envelope.data, called);
    assert.equal((envelope.metadata as { version: string }).version, 'v1');
    assert.equal(fake.calls.at(-1)?.model, 'gpt-local-test');
  });

  it('run validates the input against input_schema as the platform does: exit 2 naming the field', async () => {
    const platform = await runCliInProcess(['call', 'authors/sky', '--input', '{"topic": 3}'], platformEnv());
    const local = await runCliInProcess(['run', dirOf('sky'), '--input', '{"topic": 3}'], env);
    for (const res of [platform, local]) {
      assert.equal(res.code, 2, res.stderr);
      assert.match(res.stderr, /^agenthost: INVALID_INPUT: Invalid input: body\.topic: must be string$/m);
      assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    }
    const extra = await runCliInProcess(
      ['run', dirOf('sky'), '--input', '{"topic": "x", "colour": "red"}'],
      env,
    );
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /body: must NOT have additional properties/);
    const missing = await runCliInProcess(['run', dirOf('sky'), '--input', '{}'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /body\.topic: must have required property 'topic'/);
    assert.equal(fake.calls.length, 0, 'no model was called');
  });

  it('tool: publishes and runs in the sandbox; run packs and runs the same bundle', async () => {
    await init('tool', 'counter');
    // It declares no secrets: the platform refuses it until the author says it needs none, and the
    // one line names the flag that says so.
    const refused = await runCliInProcess(['publish', dirOf('counter')], platformEnv());
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /^agenthost: INVALID_INPUT: .*required_secrets.* \(fix: list the secrets it needs in required_secrets, or if it needs none, publish with --allow-no-secrets\)$/m,
    );
    assert.equal(
      refused.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('agenthost:')).length,
      1,
    );
    assert.equal(refused.stdout, '');
    const published = await publish('counter', '--allow-no-secrets');
    assert.match(published.stderr, /uploading the bundle: 1 files/, 'README.md and input.json are left out');
    const expected = { words: 9, characters: 43, longest_word: 'quick' };
    assert.deepEqual(
      await callJson('authors/counter', '--input-file', join(dirOf('counter'), 'input.json')),
      expected,
    );
    assert.deepEqual(await runJson('counter'), expected);
    assert.deepEqual(await runJson('counter', '--input', '{"text": "one  two"}'), {
      words: 2,
      characters: 8,
      longest_word: 'one',
    });
    const bad = await runCliInProcess(['run', dirOf('counter'), '--input', '{"text": ["a"]}'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /INVALID_INPUT: .*body\.text: must be string/);
  });

  it('a tool that fails shows its stderr tail from the run’s logs, and exits as a call does', async () => {
    await init('tool', 'broken');
    await writeFile(
      join(dirOf('broken'), 'index.js'),
      "process.stderr.write('cannot parse the frobnicator\\n'); process.exit(3);\n",
    );
    const res = await runCliInProcess(['run', dirOf('broken')], env);
    assert.equal(res.code, 1, res.stderr);
    assert.match(
      res.stderr,
      /^log ERROR +command exited with status 3; stderr tail: cannot parse the frobnicator$/m,
    );
    assert.match(res.stderr, /^agenthost: INTERNAL_ERROR: The agent’s command exited with status 3$/m);
    assert.equal(res.stdout, '');
  });

  it('agent: the managed loop calls its custom tool in the sandbox and submits; run gives the same', async () => {
    await init('agent', 'reader');
    await publish('reader', '--allow-no-secrets');
    fake.setResponder(agentModel);
    const expected = { words: 13, summary: 'Agents use tools.' };
    assert.deepEqual(
      await callJson('authors/reader', '--input-file', join(dirOf('reader'), 'input.json')),
      expected,
    );
    const toolRun = fake.calls.find((c) => c.toolResults.length > 0);
    assert.match(toolRun?.toolResults[0]?.content ?? '', /^exit code 0\nstdout:\n\{"words":13\}$/);

    fake.reset();
    fake.setResponder(agentModel);
    const ran = await runCliInProcess(['run', dirOf('reader')], env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout), expected);
    assert.match(ran.stderr, /^log INFO +count_words .* → exit code 0 in \d+ ms$/m, 'the loop’s tool calls');
    assert.ok(fake.calls.every((c) => c.provider === 'anthropic'));
    assert.match(fake.calls[0]?.prompt ?? '', new RegExp(AGENT_TEXT.replace('.', '\\.')));
  });

  it('service: publishes, deploys and answers at its URL; run serves it until stopped', async () => {
    await init('service', 'greeter');
    await publish('greeter', '--allow-no-secrets');
    const deployed = await p.request<{ id: string; url: string }>(
      'POST',
      `/workspaces/${author.workspaceId}/services`,
      { key: author.key, body: { agent: 'authors/greeter' } },
    );
    assert.equal(deployed.status, 201, deployed.text);
    try {
      await waitFor('the service to run', async () => {
        const got = await p.request<{ state: string }>(
          'GET',
          `/workspaces/${author.workspaceId}/services/${deployed.body.id}`,
          { key: author.key },
        );
        return got.body.state === 'running' ? true : undefined;
      });
      const greeting = await fetch(`${deployed.body.url}/?name=platform`);
      assert.equal(greeting.status, 200);
      assert.equal(((await greeting.json()) as { greeting: string }).greeting, 'Hello, platform!');
    } finally {
      await p.request('DELETE', `/workspaces/${author.workspaceId}/services/${deployed.body.id}`, {
        key: author.key,
      });
    }

    const served = spawnCli(['run', dirOf('greeter')], env);
    let code: number | null;
    try {
      const url = await waitFor(
        'the local URL',
        async () => /^url +(http:\/\/127\.0\.0\.1:\d+)$/m.exec(served.stdout())?.[1],
      );
      assert.match(served.stdout(), /^serving +local\/greeter@v1$/m);
      const local = await fetch(`${url}/?name=local`);
      assert.equal(((await local.json()) as { greeting: string }).greeting, 'Hello, local!');
      const health = await fetch(`${url}/health`);
      assert.deepEqual(await health.json(), { status: 'ok' });
      await waitFor('the app’s log line', async () =>
        /^log INFO +listening on 3000$/m.test(served.stderr()) ? true : undefined,
      );
    } finally {
      code = await served.stop();
    }
    assert.equal(code, 0, served.stderr());
    assert.match(served.stderr(), /stopping the service/);

    // An app that cannot start: the platform pauses it, and run ends with its last error.
    await writeFile(
      join(dirOf('greeter'), 'server.js'),
      'console.error("no config found"); process.exit(1);\n',
    );
    const crashing = await runCliInProcess(['run', dirOf('greeter')], {
      ...env,
      [ENV.serviceBackoffMs]: '20',
    });
    assert.equal(crashing.code, 1, crashing.stderr);
    assert.match(crashing.stderr, /^log ERROR +no config found$/m);
    assert.match(
      crashing.stderr,
      /^agenthost: SERVICE_FAILED: the service did not start: exited with status 1: no config found/m,
    );
    assert.equal(crashing.stdout, '', 'no URL for a service that never ran');

    const withInput = await runCliInProcess(['run', dirOf('greeter'), '--input', '{}'], env);
    assert.equal(withInput.code, 2);
    assert.match(withInput.stderr, /always-on service: it takes HTTP requests at its URL, not --input/);
  });

  it('skill: publishes and attaches to calls; run says a skill is not called, and --skill attaches it locally', async () => {
    await init('skill', 'warm-tone');
    await publish('warm-tone');
    await callJson('authors/sky', '--input', '{"topic": "tides"}', '--skills', 'authors/warm-tone@v1');
    assert.match(
      fake.calls.at(-1)?.system ?? '',
      /## Skill: authors\/warm-tone\n.*Start with the answer itself/s,
    );

    const refused = await runCliInProcess(['run', dirOf('warm-tone')], env);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^agenthost: INVALID_INPUT: warm-tone is a skill \(its SKILL\.md is valid\): a skill is not called, it is attached to calls of other agents \(fix: try it with an agent: agenthost run AGENT_DIR --skill .*warm-tone/m,
    );

    fake.reset();
    const ran = await runCliInProcess(['run', dirOf('sky'), '--skill', dirOf('warm-tone')], env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(
      fake.calls.at(-1)?.system ?? '',
      /## Skill: local\/warm-tone\n.*Start with the answer itself/s,
    );

    await writeFile(join(dirOf('warm-tone'), 'SKILL.md'), '---\nname: warm-tone\n---\n\nBody.\n');
    const invalid = await runCliInProcess(['run', dirOf('warm-tone')], env);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /INVALID_INPUT: .*body\.skill_md\.frontmatter\.description/);
  });

  it('secrets: a missing required one is exit 2 naming it; they come from the environment or --secrets-file', async () => {
    await init('tool', 'keyed');
    const manifestPath = join(dirOf('keyed'), 'agent.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    manifest.required_secrets = ['SERVICE_TOKEN'];
    manifest.optional_secrets = ['REGION_NAME'];
    manifest.output_schema = undefined;
    await writeFile(manifestPath, JSON.stringify(manifest));
    // Secret values are redacted from a tool's output: it reports their lengths.
    await writeFile(
      join(dirOf('keyed'), 'index.js'),
      'const len = (v) => (v === undefined ? null : v.length);\nprocess.stdout.write(JSON.stringify({ token: len(process.env.SERVICE_TOKEN), region: len(process.env.REGION_NAME), other: process.env.NOT_DECLARED ?? null }));\n',
    );

    // The platform: published without the bypass, since it declares one; the call needs it.
    await publish('keyed');
    const platformMissing = await runCliInProcess(
      ['call', 'authors/keyed', '--input', '{"text":""}'],
      platformEnv(),
    );
    assert.equal(platformMissing.code, 2);
    // The fix is the vault, not publishing again: --allow-no-secrets would not help here.
    assert.match(
      platformMissing.stderr,
      /^agenthost: MISSING_SECRETS: .*SERVICE_TOKEN \(fix: put it in the workspace vault with `agenthost secrets set SERVICE_TOKEN` \(value from stdin or a prompt\)\)$/m,
    );
    assert.doesNotMatch(platformMissing.stderr, /allow-no-secrets/);

    const missing = await runCliInProcess(['run', dirOf('keyed')], env);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^agenthost: INVALID_INPUT: missing required secret SERVICE_TOKEN of keyed \(fix: set it in the environment \(SERVICE_TOKEN=… agenthost run …\) or in a --secrets-file of KEY=VALUE lines\)$/m,
    );

    const fromEnv = await runCliInProcess(['run', dirOf('keyed')], {
      ...env,
      SERVICE_TOKEN: 'abcdefgh',
      NOT_DECLARED: 'never injected',
    });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.deepEqual(JSON.parse(fromEnv.stdout), { token: 8, region: null, other: null });

    const file = join(home, 'keyed.env');
    await writeFile(
      file,
      '# local secrets\nexport SERVICE_TOKEN="0123456789"\nREGION_NAME=eu-west # a comment\nEXTRA=1\n',
    );
    const fromFile = await runCliInProcess(['run', dirOf('keyed'), '--secrets-file', file], {
      ...env,
      SERVICE_TOKEN: 'abcdefgh',
    });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.deepEqual(JSON.parse(fromFile.stdout), { token: 10, region: 7, other: null }, 'the file wins');
    assert.match(
      fromFile.stderr,
      /warning: EXTRA \(in .*keyed\.env\) is not a declared secret of keyed; it is not injected/,
    );
    assert.doesNotMatch(fromFile.stderr + fromFile.stdout, /0123456789/, 'no value is printed');

    await writeFile(file, 'SERVICE_TOKEN=fine\nthis line holds s3cr3t-value\n');
    const badFile = await runCliInProcess(['run', dirOf('keyed'), '--secrets-file', file], env);
    assert.equal(badFile.code, 2);
    assert.match(badFile.stderr, /keyed\.env line 2 is not KEY=VALUE/);
    assert.doesNotMatch(badFile.stderr, /s3cr3t/);
    const noFile = await runCliInProcess(
      ['run', dirOf('keyed'), '--secrets-file', join(home, 'none.env')],
      env,
    );
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /cannot read .*none\.env: ENOENT/);
  });

  it('run refuses what it cannot run, with exit 2 and the reason', async () => {
    const empty = join(home, 'empty');
    await mkdir(empty);
    const cases: [string[], RegExp][] = [
      [['run', join(home, 'nowhere')], /nowhere is not a directory/],
      [['run', empty], /has neither agent\.json nor SKILL\.md \(fix: create one with `agenthost init`\)/],
      [['run', dirOf('sky'), '--input', '{not json'], /--input is not JSON/],
      [['run', dirOf('sky'), '--input', '{}', '--input-file', 'x.json'], /--input or --input-file, not both/],
      [['run', dirOf('sky'), '--timeout', 'soon'], /--timeout must be a positive number of seconds/],
      [['run', dirOf('sky'), '--skill', dirOf('counter')], /--skill .*counter has no SKILL\.md/],
    ];
    for (const [args, message] of cases) {
      const res = await runCliInProcess(args, env);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message);
    }

    await writeFile(join(empty, 'agent.json'), JSON.stringify({ name: 'Bad Name', description: 'x' }));
    const invalid = await runCliInProcess(['run', empty], env);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /INVALID_INPUT: .*body\.name: must be 1 to 64 lowercase/);
    assert.match(invalid.stderr, /body\.supported_providers/, 'every issue at once');

    await writeFile(
      join(empty, 'agent.json'),
      JSON.stringify({
        name: 'boss',
        type: 'agent',
        description: 'Delegates.',
        supported_providers: ['anthropic'],
        custom_tools: [{ name: 'ask', description: 'Asks.', command: 'agenthost call authors/sky/v1' }],
        manifest: {
          manifest_version: 1,
          dependencies: [{ id: 'authors/sky', version: 'v1' }],
          max_hops: 1,
          timeout_ms: 60000,
        },
      }),
    );
    const orchestrator = await runCliInProcess(['run', empty], env);
    assert.equal(orchestrator.code, 2);
    assert.match(
      orchestrator.stderr,
      /boss is an orchestrator: its dependencies \(authors\/sky@v1\) live on the platform/,
    );
  });
});

describe('the --secrets-file format', () => {
  it('reads KEY=VALUE lines, export, quotes and comments', () => {
    assert.deepEqual(
      parseSecretsFile(
        [
          '# c',
          '',
          'A=1',
          'export B = two words ',
          'C="x=\\"y\\"\\nz" # c',
          "D='raw \\n'",
          'E=',
          'F=a#b',
        ].join('\n'),
        'f',
      ),
      { A: '1', B: 'two words', C: 'x="y"\nz', D: 'raw \\n', E: '', F: 'a#b' },
    );
    assert.throws(() => parseSecretsFile('A="open', 'f'), /f line 1 has an unclosed "/);
    assert.throws(() => parseSecretsFile('1A=x', 'f'), /f line 1 is not KEY=VALUE/);
  });
});
