import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { list as listTar } from 'tar';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli } from '../helpers/process.ts';

const EXAMPLES = new URL('../../examples/', import.meta.url).pathname;

describe('examples, published through the CLI (agenthost publish)', () => {
  let p: TestPlatform;
  let env: Record<string, string>;
  before(async () => {
    p = await startTestPlatform();
    env = { AGENTHOST_URL: p.url, AGENTHOST_API_KEY: p.ownerKey };
  });
  after(() => p.close());

  const publish = (dir: string, ...flags: string[]) =>
    runCli(['publish', join(EXAMPLES, dir), ...flags], env);

  it('publishes the skill and the prompt agent', async () => {
    const skill = await publish('skill-friendly-tone');
    assert.equal(skill.code, 0, skill.stderr);
    assert.match(skill.stdout, /^published +local\/friendly-tone@v1$/m);
    const promptAgent = await publish('prompt-summarise');
    assert.equal(promptAgent.code, 0, promptAgent.stderr);
    assert.match(promptAgent.stdout, /^published +local\/summarise@v1$/m);
    assert.match(promptAgent.stdout, /^url +POST http:\/\/.+\/local\/summarise\/v1\/run$/m);
    const again = await publish('prompt-summarise', '--json');
    const record = JSON.parse(again.stdout) as { version: string; type: string; bundle: unknown };
    assert.equal(record.version, 'v2');
    assert.equal(record.type, 'prompt');
    assert.equal(record.bundle, null, 'prompt agents have no bundle');
  });

  it('publishes the tool with a bundle that honours bundle.exclude and bundle.include', async () => {
    const res = await publish('tool-word-count', '--allow-no-secrets');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /uploading the bundle: \d+ files/);
    assert.match(res.stdout, /^published +local\/word-count@v1$/m);
    const stored = await p.deps.bundles.get('bundles/local/word-count/v1.tar.gz');
    assert.ok(stored);
    const files: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-ex-'));
    try {
      await writeFile(join(dir, 'b.tgz'), stored);
      await listTar({ file: join(dir, 'b.tgz'), onReadEntry: (e) => files.push(e.path) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.deepEqual(
      files.sort(),
      ['README.md', 'index.js'],
      'NOTES.md, test-input.json and agent.json are left out; README.md is included',
    );

    // The tool itself works: JSON on stdin, JSON on stdout.
    const run = spawnSync(process.execPath, ['index.js'], {
      cwd: join(EXAMPLES, 'tool-word-count'),
      input: JSON.stringify({ text: 'one two three\nfour' }),
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { words: 4, lines: 2, characters: 18 });
  });

  it('publishes the managed-loop agent with its tool script', async () => {
    const res = await publish('agent-file-helper', '--allow-no-secrets');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^published +local\/file-helper@v1$/m);
    const list = await p.request<{
      agents: { name: string; execution_engine: string; bundle: { entries: number } | null }[];
    }>('GET', '/agents?name=file-helper');
    assert.equal(list.body.agents[0]?.execution_engine, 'managed_loop');
    assert.equal(list.body.agents[0]?.bundle?.entries, 1);
  });

  it('publishes the always-on service example and deploys it; its app answers at the service URL', async () => {
    const res = await publish('service-hello', '--allow-no-secrets');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^published +local\/hello-service@v1$/m);
    // Deployed as the example's README says: the CLI waits until the app runs and prints its URL.
    const deployed = await runCli(['services', 'deploy', 'local/hello-service', '--name', 'hello'], env);
    assert.equal(deployed.code, 0, deployed.stderr);
    const url = deployed.stdout.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+/);
    try {
      const greeting = await fetch(`${url}/?name=tests`);
      assert.equal(greeting.status, 200);
      assert.equal(((await greeting.json()) as { greeting: string }).greeting, 'Hello, tests!');
      const count = (await (await fetch(`${url}/count`)).json()) as { served: number };
      assert.ok(count.served >= 2, 'the same process served both requests');
    } finally {
      const removed = await runCli(['services', 'delete', 'hello'], env);
      assert.equal(removed.code, 0, removed.stderr);
    }
  });

  it('prints the server’s message and exits non-zero on errors', async () => {
    const noBypass = await publish('tool-word-count');
    assert.notEqual(noBypass.code, 0);
    assert.match(noBypass.stderr, /INVALID_INPUT: .*required_secrets/);
    const badKey = await runCli(['publish', join(EXAMPLES, 'prompt-summarise')], {
      ...env,
      AGENTHOST_API_KEY: 'ahk_wrong',
    });
    assert.notEqual(badKey.code, 0);
    assert.match(badKey.stderr, /UNAUTHORIZED: Invalid API key/);
    const noKey = await runCli(['publish', join(EXAMPLES, 'prompt-summarise')], {
      ...env,
      AGENTHOST_API_KEY: '',
    });
    assert.equal(noKey.code, 4, 'exit 4: auth');
    assert.match(noKey.stderr, /no API key for .*set AGENTHOST_API_KEY/);
    const empty = await mkdtemp(join(tmpdir(), 'agenthost-empty-'));
    const nothing = await runCli(['publish', empty], env);
    assert.notEqual(nothing.code, 0);
    assert.match(nothing.stderr, /neither agent.json nor SKILL.md/);
    await writeFile(join(empty, 'agent.json'), '{"name": "Bad Name"');
    const broken = await runCli(['publish', empty], env);
    assert.match(broken.stderr, /is not valid JSON/);
    await writeFile(
      join(empty, 'agent.json'),
      JSON.stringify({ name: 'Bad Name', description: 'x', supported_providers: ['any'] }),
    );
    const invalid = await runCli(['publish', empty], env);
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /body\.name/);
    await rm(empty, { recursive: true, force: true });
    const down = await runCli(['publish', join(EXAMPLES, 'prompt-summarise')], {
      ...env,
      AGENTHOST_URL: 'http://127.0.0.1:9',
    });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach agenthost at http:\/\/127.0.0.1:9: bad port \(fix: start it/);
  });
});
