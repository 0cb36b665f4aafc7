/**
 * `npm run bench:test-cpu`: what `npm test` costs in CPU, this checkout against another, side by
 * side in one run. The suite is bound by CPU on the two cores CI has (docs/contributing.md, "How
 * long the tests take"), so its CPU, not its wall time, says whether a change to how the tests run
 * made the run cheaper.
 *
 * Each repeat runs `npm test -- <files>` in each checkout, in an order rotated per repeat, through
 * `sh`, which then reads its own /proc/<pid>/stat: the waited children's user plus system time is
 * the whole run's (npm, the runner, every test process and what each started and reaped; commandCpu,
 * bench/proc-stats.ts). Medians over the repeats, and the median of the per-repeat ratios. A run
 * that fails is reported, not counted.
 *
 *   BENCH_BASELINE=<commit> npm run bench:test-cpu [-- <file or glob>…]
 *   (or BENCH_BASELINE_DIR=<checkout>; bench/baseline-checkout.ts); BENCH_REPEATS=n (default 3);
 *   --no-write to only print
 *
 * Without files it runs the files that share processes (test/setup/shared-processes.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHARED_DIRS } from '../test/setup/shared-processes.ts';
import { baselineCheckout, commitOf } from './baseline-checkout.ts';
import { commandCpu } from './proc-stats.ts';
import { machineLine, median, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const baseline = baselineCheckout();
if (!baseline || !existsSync(join(baseline.dir, 'node_modules'))) {
  process.stderr.write(
    'BENCH_BASELINE=<commit> or BENCH_BASELINE_DIR=<a checkout with its node_modules> is needed\n',
  );
  process.exit(2);
}
const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const globs = files.length > 0 ? files : SHARED_DIRS.map((d) => `${d}*.test.ts`);

interface Checkout {
  label: string;
  dir: string;
  cpu: number[];
  wall: number[];
}

/** `npm test -- globs` in `dir`: its CPU and wall time in seconds (commandCpu, bench/proc-stats.ts), and its output. */
async function timedRun(dir: string): Promise<{ cpu: number; wall: number; ok: boolean; output: string }> {
  const log = join(mkdtempSync(join(tmpdir(), 'agenthost-bench-test-cpu-')), 'npm-test.log');
  const t = await commandCpu(['npm', 'test', '--', ...globs], { cwd: dir, stdout: log, stderr: log });
  const output = readFileSync(log, 'utf8');
  rmSync(dirname(log), { recursive: true, force: true });
  return { cpu: t.cpuMs / 1000, wall: t.wallMs / 1000, ok: t.exit === 0, output };
}

const checkouts: Checkout[] = [
  { label: 'this checkout', dir: ROOT, cpu: [], wall: [] },
  { label: process.env.BENCH_BASELINE_NAME ?? baseline.commit, dir: baseline.dir, cpu: [], wall: [] },
];
process.on('exit', () => baseline.close());
const loadAtStart = loadavg()[0] ?? 0;
const started = Date.now();
const failures: string[] = [];
for (let r = 0; r < REPEATS; r++) {
  for (let i = 0; i < checkouts.length; i++) {
    const c = checkouts[(i + r) % checkouts.length] as Checkout;
    const t = await timedRun(c.dir);
    process.stdout.write(`repeat ${r + 1}: ${c.label}: ${t.cpu.toFixed(0)} s CPU, ${t.wall.toFixed(0)} s\n`);
    if (!t.ok) {
      // What failed, from the spec reporter's summary, so a failed run can be told from a slow one.
      const failed = t.output.slice(t.output.lastIndexOf('failing tests:'));
      process.stdout.write(`${failed.split('\n').slice(0, 40).join('\n')}\n`);
      failures.push(`${c.label} (repeat ${r + 1})`);
      continue;
    }
    c.cpu.push(t.cpu);
    c.wall.push(t.wall);
  }
}
const [mine, base] = checkouts as [Checkout, Checkout];
const ratios = mine.cpu.flatMap((cpu, i) => (base.cpu[i] ? [cpu / base.cpu[i]] : []));
const s = (n: number) => n.toFixed(0);
const table = [
  `${machineLine()}; ${REPEATS} repeats of \`npm test -- ${globs.join(' ')}\` in each checkout, in an order rotated per repeat (${Math.round((Date.now() - started) / 1000)} s, load average ${loadAtStart.toFixed(1)} at its start and ${(loadavg()[0] ?? 0).toFixed(1)} at its end). CPU is the whole run's user plus system time (npm, the runner, every test process and what each started and reaped); medians over the repeats.`,
  '',
  '| checkout | CPU s | wall s |',
  '| --- | ---: | ---: |',
  ...checkouts.map((c) => `| ${c.label} (${commitOf(c.dir)}) | ${s(median(c.cpu))} | ${s(median(c.wall))} |`),
  '',
  `This checkout's CPU ÷ ${base.label}'s: ${median(ratios).toFixed(2)} (each repeat: ${ratios.map((x) => x.toFixed(2)).join(', ')}).${failures.length > 0 ? ` Runs that failed, not counted: ${failures.join(', ')}.` : ''}`,
].join('\n');
process.stdout.write(`${table}\n`);
await writeReport('test-cpu', 'The test suite’s CPU', table);
