/**
 * The README's TypeScript snippet, run as a new user following the README would: saved in the
 * repository root and started with the command the README gives, from a shell whose `node` is the
 * machine's own (Node 20 here, which cannot run a `.ts` file by itself: `node call.ts` failed with
 * ERR_UNKNOWN_FILE_EXTENSION), against a platform with the word-count example published as the
 * README publishes it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { type RunningPlatform, runCli, startPlatformProcess } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** The snippet after "**From TypeScript**", and the command the README runs it with. */
async function readmeSnippet(): Promise<{ code: string; command: string }> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('**From TypeScript**');
  assert.ok(from >= 0, 'the README has its TypeScript section');
  const block = /```ts\n([\s\S]*?)```\n([\s\S]*?)\n\n/.exec(readme.slice(from));
  assert.ok(block?.[1], 'the TypeScript snippet');
  const command = /run it with `([^`]+)`/.exec(block[2] ?? '')?.[1];
  assert.ok(command, `the README says how to run the snippet, right after it:\n${block[2]}`);
  return { code: block[1], command };
}

describe('the README’s TypeScript snippet runs as the README says', () => {
  const key = generateApiKey();
  let dataDir: string;
  let platform: RunningPlatform;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-readme-sdk-'));
    platform = await startPlatformProcess({ PLATFORM_DATA_DIR: dataDir, PLATFORM_BOOTSTRAP_API_KEY: key });
  });
  after(async () => {
    await platform?.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints 3 on this machine’s Node, whatever its version', { timeout: 120_000 }, async () => {
    const { code, command } = await readmeSnippet();
    const published = await runCli(['publish', 'examples/tool-word-count', '--allow-no-secrets'], {
      AGENTHOST_URL: platform.url,
      AGENTHOST_API_KEY: key,
    });
    assert.equal(published.code, 0, published.stderr);

    // The platform's port is the test's, not 8787; the file's name is this run's own.
    assert.match(code, /http:\/\/127\.0\.0\.1:8787/);
    const file = `readme-snippet-${randomUUID()}.ts`;
    await writeFile(join(ROOT, file), code.replace('http://127.0.0.1:8787', platform.url));
    try {
      // The user's shell: none of this project's binaries (npm test puts node_modules/.bin first).
      const path = (process.env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => !dir.includes('node_modules'))
        .join(delimiter);
      const env = { ...process.env, PATH: path, AGENTHOST_API_KEY: key };
      const machine = await run('node', ['--version'], { env });
      const { stdout, stderr } = await run('sh', ['-c', command.replace('call.ts', file)], {
        cwd: ROOT,
        env,
      }).catch((err: { stdout: string; stderr: string; message: string }) => {
        assert.fail(`\`${command}\` failed on the machine's node ${machine.stdout.trim()}:\n${err.stderr}`);
      });
      assert.equal(stdout.trim(), '3', stderr);
    } finally {
      await rm(join(ROOT, file), { force: true });
    }
  });
});
