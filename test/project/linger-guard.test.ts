// test/setup/linger-guard.ts: a test process that outlives its tests (a handle left open) ends
// with a failure naming what holds it, instead of holding the whole run until CI's limit.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { groupIntoProcesses } from '../setup/shared-processes.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const GUARD = pathToFileURL(join(ROOT, 'test', 'setup', 'linger-guard.ts')).href;
const run = promisify(execFile);

/** Runs `body` as a test file under `node --test`: its exit status and its output. */
async function runTestFile(dir: string, name: string, body: string) {
  const file = join(dir, name);
  await writeFile(file, body);
  try {
    // Not as a subtest of this run (node:test tells its child processes so through the environment).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const { stdout, stderr } = await run(process.execPath, ['--test', file], { timeout: 20_000, env });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; killed: boolean; stdout: string; stderr: string };
    assert.equal(e.killed, false, 'the process ended by itself');
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

describe('the linger guard', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-linger-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('fails a process that a listening server keeps alive after its last test, naming the server', async () => {
    const { code, output } = await runTestFile(
      dir,
      'leaky.test.mjs',
      `import { createServer } from 'node:http';
import { it } from 'node:test';
import { guardAgainstLingering } from ${JSON.stringify(GUARD)};
it('leaves a server listening', () => { createServer().listen(0, '127.0.0.1'); });
guardAgainstLingering(300);`,
    );
    assert.notEqual(code, 0, output);
    assert.match(output, /still running 0\.3 s after its last test, held by: .*TCPServerWrap/);
  });

  it('does not hold a process that ends by itself', async () => {
    const started = Date.now();
    const { code, output } = await runTestFile(
      dir,
      'tidy.test.mjs',
      `import { it } from 'node:test';
import { guardAgainstLingering } from ${JSON.stringify(GUARD)};
it('passes', () => {});
guardAgainstLingering(60_000);`,
    );
    assert.equal(code, 0, output);
    assert.ok(Date.now() - started < 30_000, 'not held for the guard’s grace');
  });

  it('is called at the end of every entry file, a group’s or a file’s own, after what it imports', async () => {
    const grouped = ['test/core/answer-page.test.ts', 'test/core/bundle-archive.test.ts'];
    const alone = 'test/e2e/schedules.test.ts';
    const entries = groupIntoProcesses([alone, ...grouped], ROOT, dir);
    assert.deepEqual(
      entries.map((e) => e.slice(dir.length + 1)),
      ['test-e2e-schedules.test.mjs', 'test-core-1.test.mjs'],
    );
    const importOf = (f: string) => `import ${JSON.stringify(pathToFileURL(join(ROOT, f)).href)};`;
    for (const [entry, files] of [
      [entries[0], [alone]],
      [entries[1], grouped],
    ] as const) {
      const lines = (await readFile(entry ?? '', 'utf8')).trim().split('\n');
      assert.deepEqual(lines.slice(0, files.length), files.map(importOf));
      assert.equal(lines.at(-1), 'guardAgainstLingering();');
    }
  });
});
