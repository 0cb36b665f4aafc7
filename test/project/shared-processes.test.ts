import assert from 'node:assert/strict';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ALONE, inSharedDir, SHARED_DIRS } from '../setup/shared-processes.ts';

/**
 * The rule of test/setup/shared-processes.ts, held against every test file of the directories
 * whose files share a process: a file that changes what its process shares keeps a process of its
 * own (is listed in ALONE). Read from the source, the file's own and that of the test helpers it
 * imports: hooks at its top level that run per test, mocks of process-wide things, writes to
 * process.env, counts of its own process's.
 */

const ROOT = join(import.meta.dirname, '..', '..');

const HAZARDS: [RegExp, string][] = [
  [/^(beforeEach|afterEach)\(/m, 'a per-test hook at its top level'],
  [
    /\bmockClient\(|\bmock\.(method|timers|module|property|getter|setter)\b/,
    'a mock of a process-wide thing',
  ],
  [/process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env/, 'a write to process.env'],
  [/['"`]\/proc\/self\/io\b|memoryUsage\(\)|\bppid\b/, "a count of its own process's"],
];

/** The test helpers a file imports directly, as paths from the root. */
function helpersOf(file: string, source: string): string[] {
  return [...source.matchAll(/from '(\.{1,2}\/[^']+)'/g)]
    .map((m) => relative(ROOT, join(ROOT, dirname(file), m[1] as string)))
    .filter((f) => f.startsWith('test/helpers/') && existsSync(join(ROOT, f)));
}

/** Why `file` may not share a process, if it may not. */
function hazardsOf(file: string): string[] {
  const own = readFileSync(join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const [pattern, what] of HAZARDS) {
    if (pattern.test(own)) found.push(what);
    for (const helper of helpersOf(file, own)) {
      // A helper's hooks are not at the file's top level, and its counts are of the processes it is given.
      if (what.startsWith('a per-test hook') || what.startsWith('a count')) continue;
      if (pattern.test(readFileSync(join(ROOT, helper), 'utf8'))) found.push(`${what} (${helper})`);
    }
  }
  return found;
}

describe('test files that share a process', () => {
  const files = globSync(
    SHARED_DIRS.map((d) => `${d}*.test.ts`),
    { cwd: ROOT },
  );

  it('are every file of their directories but those that change what the process shares', () => {
    assert.ok(files.length > 100, `files: ${files.length}`);
    const unlisted = files
      // This file's own samples (below) name every hazard, in strings.
      .filter((f) => ALONE[f] === undefined && f !== relative(ROOT, import.meta.filename))
      .map((f) => [f, hazardsOf(f)] as const)
      .filter(([, found]) => found.length > 0)
      .map(([f, found]) => `${f}: ${found.join(', ')}`);
    assert.deepEqual(
      unlisted,
      [],
      `share a process but may not (list them in ALONE):\n${unlisted.join('\n')}`,
    );
  });

  it('keep no file alone that is gone or outside those directories', () => {
    const stale = Object.keys(ALONE).filter((f) => !existsSync(join(ROOT, f)) || !inSharedDir(f));
    assert.deepEqual(stale, []);
  });

  it('tell a per-test hook, a mock and a write to process.env apart from what is harmless', () => {
    const hazard = (text: string) => HAZARDS.filter(([p]) => p.test(text)).map(([, what]) => what);
    assert.deepEqual(hazard('beforeEach(() => {});'), ['a per-test hook at its top level']);
    assert.deepEqual(hazard("describe('x', () => {\n  beforeEach(() => {});\n});"), []);
    assert.deepEqual(hazard('const s3 = mockClient(S3Client);'), ['a mock of a process-wide thing']);
    assert.deepEqual(hazard('mock.timers.enable();'), ['a mock of a process-wide thing']);
    assert.deepEqual(hazard('const f = mock.fn();'), []);
    assert.deepEqual(hazard("process.env.AWS_REGION = 'eu-west-1';"), ['a write to process.env']);
    assert.deepEqual(hazard("process.env['X'] = '1';"), ['a write to process.env']);
    assert.deepEqual(hazard('delete process.env.X;'), ['a write to process.env']);
    assert.deepEqual(hazard("if (process.env.CI === 'true') {}"), []);
    assert.deepEqual(hazard("readFileSync('/proc/self/io', 'utf8')"), ["a count of its own process's"]);
    assert.deepEqual(hazard('const { heapUsed } = process.memoryUsage();'), ["a count of its own process's"]);
    assert.deepEqual(hazard('if (ppid !== process.pid) continue;'), ["a count of its own process's"]);
    assert.deepEqual(hazard("const runId = 'run-' + process.pid;"), []);
  });
});
