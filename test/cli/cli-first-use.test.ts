import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emulatedAdminKeyFile } from '../../functions/emulator/emulated-deployment.ts';
import { ADMIN_KEY_FILE } from '../../functions/platform/bootstrap.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli } from '../helpers/process.ts';

/**
 * What a new user meets in the CLI's output: error lines that name their code, call
 * --json with the answer's headers, next steps that run when copied, a tool call's log line, and a
 * sign-in hint that names the key file of the data dir in use.
 */
describe('the CLI’s output for a new user', () => {
  let p: TestPlatform;
  let home: string;
  let user: { key: string };
  let env: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-first-'));
    p = await startTestPlatform();
    user = await p.createAccount('first-use', 'pro');
    env = { AGENTHOST_URL: p.url, AGENTHOST_API_KEY: user.key, XDG_CONFIG_HOME: join(home, 'none') };
    // A tool made of the sandbox's own programs: `cat` answers its input.
    const res = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: user.key,
      body: {
        name: 'echo',
        type: 'tool',
        description: 'echoes its input',
        supported_providers: ['any'],
        runtime: { command: 'cat' },
        required_secrets: [],
      },
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await p?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('names the error code on the failure line, for the CLI’s own failures too', async () => {
    const missing = await runCli(['call', 'first-use/nothing', '--input', '{}'], env);
    assert.equal(missing.code, 5, missing.stderr);
    assert.match(missing.stderr, /^agenthost: NOT_FOUND: no agent first-use\/nothing /);
    const usage = await runCli(['agents', 'list', '--bogus'], env);
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /^agenthost: INVALID_INPUT: unknown option '--bogus'/);
    const badJson = await runCli(['call', 'first-use/echo', '--input', '{"a":'], env);
    assert.equal(badJson.code, 2, badJson.stderr);
    assert.match(badJson.stderr, /^agenthost: INVALID_INPUT: --input is not JSON/);
  });

  it('call --json prints the answer’s headers', async () => {
    const res = await runCli(['call', 'first-use/echo', '--input', '{"a":1}', '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as {
      data: unknown;
      metadata: { request_id: string };
      headers: Record<string, string>;
    };
    assert.deepEqual(out.data, { a: 1 });
    assert.equal(out.headers['x-request-id'], out.metadata.request_id);
    assert.match(out.headers['x-ratelimit-limit'] ?? '', /^\d+$/);
    assert.match(out.headers['content-type'] ?? '', /^application\/json/);
  });

  it('logs a tool call’s success without a model it did not use', async () => {
    const call = await runCli(['call', 'first-use/echo@v1', '--input', '{"b":2}'], env);
    assert.equal(call.code, 0, call.stderr);
    const logs = await runCli(['logs', 'first-use/echo@v1'], env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\S+Z INFO +call \S+ succeeded in \d+ ms \(\d+ ms of compute\) \[/m);
    assert.doesNotMatch(logs.stdout, /null|0 tokens/);
  });

  it('init’s next steps and README name the installed CLI, never npx (which would fetch the name from the registry)', async () => {
    const cwd = join(home, 'project');
    await mkdir(cwd);
    const res = await runCli(['init', '--type', 'tool', 'word-stats'], { HOME: home }, { cwd });
    assert.equal(res.code, 0, res.stderr);
    const steps = res.stderr.split('\n').filter((l) => /^ {2}\S+ it: /.test(l));
    assert.equal(steps.length, 3, res.stderr);
    for (const step of steps)
      assert.match(step, /^ {2}\S+ it: +(cd word-stats && )?agenthost (run|publish|call) /, step);
    const readme = await readFile(join(cwd, 'word-stats', 'README.md'), 'utf8');
    const commands = readme.split('\n').filter((l) => /^(npx )?agenthost /.test(l));
    assert.ok(commands.length >= 3, readme);
    for (const c of commands) assert.match(c, /^agenthost /, c);
  });

  it('init’s next steps name a directory with spaces and quotes so that the shell reads it back whole', async () => {
    const cwd = join(home, 'quoted');
    await mkdir(cwd);
    const dir = `it's "mine" $HOME`;
    const res = await runCli(['init', '--type', 'skill', '--name', 'mine', dir], { HOME: home }, { cwd });
    assert.equal(res.code, 0, res.stderr);
    // What sh makes of each step's directory, as the user's shell would run the line as copied.
    const shellReads = async (line: string) => {
      const child = spawn('sh', ['-c', line], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      await once(child, 'exit');
      return out;
    };
    const tryIt = /^ {2}try it: +agenthost run AGENT_DIR --skill (.+)$/m.exec(res.stderr)?.[1];
    assert.ok(tryIt, res.stderr);
    assert.equal(await shellReads(`printf %s ${tryIt}`), dir);
    const cd = /^ {2}publish it: +(cd .+) && agenthost publish \.$/m.exec(res.stderr)?.[1];
    assert.ok(cd, res.stderr);
    assert.equal(await shellReads(`${cd} && pwd`), `${join(cwd, dir)}\n`);
  });

  it('names the owner key file of the data dir in use when there is no key or a wrong one', async () => {
    const dataDir = join(home, 'my data');
    await mkdir(join(dataDir, 'aws'), { recursive: true });
    const keyFile = join(dataDir, ADMIN_KEY_FILE);
    await writeFile(keyFile, 'ahk_not-shown\n');
    const base = { AGENTHOST_URL: p.url, XDG_CONFIG_HOME: join(home, 'none'), PLATFORM_DATA_DIR: dataDir };

    const none = await runCli(['whoami'], base);
    assert.equal(none.code, 4, none.stderr);
    assert.match(none.stderr, /^agenthost: UNAUTHORIZED: no API key for http:\/\/127\.0\.0\.1:\d+ \(fix: /);
    assert.ok(none.stderr.includes(`owner key of the platform started with this data dir is in ${keyFile})`));
    const wrong = await runCli(['whoami'], { ...base, AGENTHOST_API_KEY: 'ahk_wrong' });
    assert.equal(wrong.code, 4, wrong.stderr);
    assert.ok(wrong.stderr.includes(keyFile), wrong.stderr);
    assert.ok(!`${none.stderr}${wrong.stderr}`.includes('ahk_not-shown'), 'the key itself is never printed');

    // The emulated deployment's key, when that is the one the data dir holds.
    await rm(keyFile);
    await writeFile(emulatedAdminKeyFile(dataDir), 'ahk_not-shown\n');
    const emulated = await runCli(['whoami'], base);
    assert.ok(emulated.stderr.includes(emulatedAdminKeyFile(dataDir)), emulated.stderr);

    // A data dir without one: no file is named rather than a guess.
    const empty = await runCli(['whoami'], { ...base, PLATFORM_DATA_DIR: join(home, 'empty') });
    assert.equal(empty.code, 4, empty.stderr);
    assert.doesNotMatch(empty.stderr, /admin-api-key/);
  });
});
