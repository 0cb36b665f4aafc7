// TEST_TIMELINE (test/setup/file-timeline.ts, timeline-summary.ts): a test process records its
// wall and CPU time, its children's included, and the summary reads them back.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type FileTimeline, TIMELINE_ENV, timelineSummary } from '../setup/timeline-summary.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('the test timeline', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-timeline-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('records a test process once, at its exit, with the CPU of a child it waited for', async () => {
    const out = join(dir, 'timeline.jsonl');
    const file = join(dir, 'busy.test.mjs');
    // The child spins for 300 ms of CPU; the parent waits for it (so Linux adds it to cutime).
    await writeFile(
      file,
      `import { execFileSync } from 'node:child_process';
execFileSync(process.execPath, ['-e', 'const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300000);']);`,
    );
    await run(process.execPath, ['--import', join(ROOT, 'test', 'setup', 'file-timeline.ts'), file], {
      env: { ...process.env, [TIMELINE_ENV]: out },
    });
    // A process that is not a test file's records nothing.
    await run(process.execPath, ['--import', join(ROOT, 'test', 'setup', 'file-timeline.ts'), '-e', '1'], {
      env: { ...process.env, [TIMELINE_ENV]: out },
    });
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 1, lines.join('\n'));
    const line = JSON.parse(lines[0] ?? '{}') as FileTimeline;
    assert.equal(line.file, file);
    assert.ok(line.endMs >= line.startMs);
    assert.ok(line.selfCpuMs > 0);
    assert.ok(line.childrenCpuMs >= 250, `children's CPU ${line.childrenCpuMs} ms`);
  });

  it('sums the run: its span, its CPU in cores, the files that held a slot longest', async () => {
    const out = join(dir, 'summary.jsonl');
    const rows: FileTimeline[] = [
      {
        file: join(ROOT, 'test/e2e/a.test.ts'),
        startMs: 0,
        endMs: 10_000,
        selfCpuMs: 1_000,
        childrenCpuMs: 4_000,
      },
      {
        file: '/tmp/agenthost-test-groups-x/test-core-1.test.mjs',
        startMs: 2_000,
        endMs: 4_000,
        selfCpuMs: 1_000,
        childrenCpuMs: 0,
      },
    ];
    await writeFile(out, rows.map((r) => JSON.stringify(r)).join('\n'));
    const summary = timelineSummary(out, ROOT);
    assert.match(summary, /Test processes: 2, from the first's start to the last's end 10\.0 s;/);
    assert.match(summary, /CPU 6\.0 s .*, 0\.60 cores on average\./);
    const table = summary.split('\n').filter((l) => /^\| [^-]/.test(l) && !l.startsWith('| the'));
    assert.deepEqual(table, [
      '| test/e2e/a.test.ts | 0.0 | 10.0 | 1.0 | 4.0 |',
      '| test-core-1.test.mjs | 2.0 | 2.0 | 1.0 | 0.0 |',
    ]);
  });
});
