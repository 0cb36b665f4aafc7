/**
 * `npm test`: node's test runner (`run()` of node:test, the API behind `node --test`) over every
 * test file, with the global setup (test/setup/global.ts), five files at a time, each in its own
 * process, reported by the spec reporter on standard output.
 *
 * Why not `node --test <globs>`: it sorts the files by name, so the end-to-end files, which are the
 * longest and spend much of their time waiting (the real minute of the cron case, a deployment
 * starting), began halfway through the run and the last of them ran alone at its end. Here the
 * files start longest first (START_FIRST below), so their waits overlap the other files' work and
 * the run ends on short files. Five at a time (not three): with three the two cores stood idle a
 * third of the run while files waited; with five they are busy to the end (docs/contributing.md,
 * "How long the tests take").
 *
 * `npm test -- <file or glob>…` runs only those files, in the same way. `TEST_TIMELINE=<file>`
 * records each test process's wall and CPU time there and prints the longest at the end
 * (test/setup/file-timeline.ts).
 */
import { globSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type RunOptions, run } from 'node:test';
import { spec } from 'node:test/reporters';
import { groupIntoProcesses } from './shared-processes.ts';
import { TIMELINE_ENV, timelineSummary } from './timeline-summary.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PATTERNS = ['test/**/*.test.ts', 'functions/**/*.test.ts'];

/**
 * Files that start before the rest, in this order: each group is longer (in wall time, waits
 * included) than what follows it. A file not listed starts after these, in name order.
 */
const START_FIRST = [
  'test/e2e/schedules.test.ts',
  'test/e2e/',
  'test/cli/',
  'test/dashboard/dashboard-a11y.test.ts',
  'test/cdk/cdk.test.ts',
  // cdk.test.ts's parts, longest first (each synthesizes the stacks itself; handler-bundles builds
  // every handler with esbuild).
  'test/cdk/handler-bundles.test.ts',
  'test/cdk/cdk-dashboard.test.ts',
  'test/cdk/cdk-jobs.test.ts',
  'test/cdk/cdk-api.test.ts',
  'test/cdk/cdk-sandbox-cluster.test.ts',
  'test/cdk/cdk-least-privilege.test.ts',
  'test/contract/',
  // Files of their own that wait most of their time (the store's retries on the cloud's timing,
  // the services' task programs): left to name order they ran last, each holding a slot after
  // the rest had ended.
  'test/adapters/dynamodb-transient-retry.test.ts',
  'test/adapters/ecs-service-task-programs.test.ts',
  // Each starts the platform as a process (npm start, a crash and a restart, a second one on the
  // same data dir): ten seconds or so apiece, which left to name order ran last, a core idle.
  'test/platform/',
  'test/dashboard/',
  'test/cdk/',
  // The groups of unit files that share a process (test/setup/shared-processes.ts): each runs a
  // dozen files one after another, longer than any file left. The SDK's and the project's first:
  // each holds files of several seconds (the packed SDK installed, the README's snippet run), and
  // left to name order they ran last, alone, while the other core stood idle.
  'test/sdk/',
  'test/project/',
  'test/api/',
  'test/adapters/',
  // By their longest group: each of these ended the run when it started after shorter ones.
  'test/core/',
  'test/edge/',
  'test/emulator/',
];

/** A file's place: the index of the first START_FIRST entry it matches, else after all of them. */
function rank(file: string): number {
  const i = START_FIRST.findIndex(
    (prefix) => file === prefix || (prefix.endsWith('/') && file.startsWith(prefix)),
  );
  return i === -1 ? START_FIRST.length : i;
}

export function orderedTestFiles(patterns: string[]): string[] {
  const files = [...new Set(globSync(patterns, { cwd: ROOT, exclude: (name) => name === 'node_modules' }))];
  return files.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

if (import.meta.main) {
  const files = orderedTestFiles(process.argv.length > 2 ? process.argv.slice(2) : PATTERNS);
  if (files.length === 0) {
    process.stderr.write(`no test file matches ${process.argv.slice(2).join(' ')}\n`);
    process.exit(1);
  }
  // The CLI's start compiles its modules once into this cache; every CLI process of the run reads it.
  process.env.NODE_COMPILE_CACHE ??= join(ROOT, 'node_modules', '.cache', 'node-compile-cache');
  // `globalSetupPath` is run()'s form of --test-global-setup (Node 24); @types/node does not list it yet.
  // The groups' entry files, this run's own (another run of this checkout may be writing its own).
  const groupsDir = mkdtempSync(join(tmpdir(), 'agenthost-test-groups-'));
  process.on('exit', () => rmSync(groupsDir, { recursive: true, force: true }));
  const entries = groupIntoProcesses(files, ROOT, groupsDir);
  const options: RunOptions & { globalSetupPath: string } = {
    files: entries.map((f) => resolve(ROOT, f)),
    cwd: ROOT,
    concurrency: 5,
    timeout: 120_000,
    // Not forceExit: a group of files (test/setup/shared-processes.ts) imports them one after
    // another, and a file that awaits before it declares its tests (a synthesis) would find its
    // process gone, its tests silently not run (14 CDK tests were missing from a green run).
    globalSetupPath: join(ROOT, 'test', 'setup', 'global.ts'),
  };
  // TEST_TIMELINE=<file>: each test process records its wall and CPU time, summed up at the end.
  const timeline = process.env[TIMELINE_ENV] ? resolve(process.env[TIMELINE_ENV]) : undefined;
  if (timeline) {
    writeFileSync(timeline, '');
    process.env[TIMELINE_ENV] = timeline;
    options.execArgv = ['--import', join(ROOT, 'test', 'setup', 'file-timeline.ts')];
  }
  const report = run(options)
    .on('test:fail', () => {
      process.exitCode = 1;
    })
    .compose(spec);
  report.pipe(process.stdout, { end: false });
  report.on('end', () => {
    if (timeline) process.stdout.write(`\n${timelineSummary(timeline, ROOT)}`);
  });
}
