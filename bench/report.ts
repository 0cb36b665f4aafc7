/** What the benchmarks share: percentiles and medians, the machine line, and their section of docs/performance.md. */
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DOC = join(fileURLToPath(new URL('..', import.meta.url)), 'docs', 'performance.md');

/** The value at quantile `q` (0..1) of ascending `sorted` samples; 0 when there are none. */
export const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** The median of `values` (any order): the middle one, or the mean of the middle two. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** "Machine: <cores> × <model>, <memory> GiB, Node <version>", the start of every results note. */
export function machineLine(): string {
  return `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/**
 * The command that reproduces this run: its BENCH_* settings (a checkout's path shown as
 * `<checkout>`: it is the reader's own), any PLATFORM_* setting, and the npm script.
 */
export function commandLine(bench: string): string {
  // PLATFORM_* too: the platforms a bench starts inherit them (PLATFORM_TRACES=off changes the run).
  const settings = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_') || name.startsWith('PLATFORM_'))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${name.endsWith('_DIR') ? '<checkout>' : value}`);
  return [...settings, `npm run bench:${bench}`].join(' ');
}

/**
 * Replaces the bench's section of docs/performance.md (between its markers, added under `heading`
 * the first time) with `table`, unless the command line says --no-write. A line under the table
 * names the run's date and the command that reproduces it (the table's own first line names the
 * machine), so every figure in the doc carries all three.
 */
export async function writeReport(
  bench: string,
  heading: string,
  table: string,
  section = bench,
): Promise<void> {
  if (process.argv.includes('--no-write')) return;
  const provenance = `Run ${new Date().toISOString().slice(0, 10)}: \`${commandLine(bench)}\`.`;
  const start = `<!-- bench-${section}:start (written by npm run bench:${bench}) -->`;
  const end = `<!-- bench-${section}:end -->`;
  let doc = await readFile(DOC, 'utf8');
  if (!doc.includes(start)) doc += `\n## ${heading}\n\n${start}\n${end}\n`;
  const s = doc.indexOf(start);
  const e = doc.indexOf(end);
  await writeFile(DOC, `${doc.slice(0, s + start.length)}\n${table}\n\n${provenance}\n${doc.slice(e)}`);
  process.stdout.write(`Wrote ${DOC}\n`);
}
