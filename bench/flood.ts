/**
 * `npm run bench:flood`: one account flooding the API at concurrency 64 for 15 s, against another
 * tenant's latency (target: the other tenant's p50 within 2× of its p50 alone),
 * without the per-account request rate and with it, side by side in one run on the two platforms of
 * bench/neighbour-load.ts (`npm start`'s local mode).
 *
 * The flood is the free account's `GET /workspaces/<its own>/tasks?limit=1` (a small answer, the
 * cheapest keyed route with a store read) on BENCH_FLOOD_CONNECTIONS connections, each sending its
 * next request the moment the last is answered, a 429 included. Each repeat measures, on each
 * platform, the light tenant's GET /tasks one at a time for BENCH_PHASE_MS alone (p50), then for as
 * long again beside the flood. The table gives the medians over the repeats, and what the flooding
 * account got. Results go to docs/performance.md.
 */

import {
  type HeavyResult,
  lightLatencies,
  startHeavy,
  startPlatforms,
  stopPlatforms,
} from './neighbour-load.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 15_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 64);
/** The target: the other tenant's p50 beside the flood within this factor of its p50 alone. */
const TARGET_RATIO = 2;

interface Round {
  alone: number;
  loaded: number;
  /** The p95s: where a flood that the p50 hides (a queue now and then) shows. */
  alone95: number;
  loaded95: number;
  heavy: HeavyResult;
}

async function main(): Promise<void> {
  const platforms = await startPlatforms();
  const rounds = new Map<string, Round[]>(platforms.map((p) => [p.name, []]));
  try {
    for (let r = 0; r < REPEATS; r++) {
      for (const p of r % 2 ? [...platforms].reverse() : platforms) {
        const alone = await lightLatencies(p, PHASE_MS);
        const flooding = await startHeavy(p, {
          path: `/workspaces/${p.heavyWorkspace}/tasks?limit=1`,
          connections: CONNECTIONS,
          ms: PHASE_MS,
        });
        const [loaded, heavy] = await Promise.all([lightLatencies(p, PHASE_MS), flooding]);
        const round = {
          alone: quantile(alone, 0.5),
          loaded: quantile(loaded, 0.5),
          alone95: quantile(alone, 0.95),
          loaded95: quantile(loaded, 0.95),
          heavy,
        };
        rounds.get(p.name)?.push(round);
        process.stdout.write(
          `${p.name}: light p50 ${round.alone.toFixed(2)} ms alone, ${round.loaded.toFixed(2)} ms beside the flood (p95 ${round.alone95.toFixed(2)}, ${round.loaded95.toFixed(2)}); flood ${heavy.served} served, ${heavy.refused} refused\n`,
        );
      }
    }
  } finally {
    await stopPlatforms(platforms);
  }
  const f = (n: number) => n.toFixed(2);
  const ratio = (name: string) => median((rounds.get(name) ?? []).map((r) => r.loaded / r.alone));
  const verdict = (name: string) => (ratio(name) <= TARGET_RATIO ? 'met' : 'missed');
  const rows = platforms.map((p) => {
    const rs = rounds.get(p.name) ?? [];
    const perSecond = (n: (r: Round) => number) => median(rs.map((r) => n(r) / (PHASE_MS / 1000)));
    const m = (n: (r: Round) => number) => f(median(rs.map(n)));
    return `| ${p.name} | ${m((r) => r.alone)} | ${m((r) => r.loaded)} | ${f(ratio(p.name))}× (${verdict(p.name)}) | ${m((r) => r.alone95)} | ${m((r) => r.loaded95)} | ${perSecond((r) => r.heavy.served).toFixed(0)} | ${perSecond((r) => r.heavy.refused).toFixed(0)} |`;
  });
  const table = [
    `${machineLine()}; ${REPEATS} repeats of ${PHASE_MS / 1000} s alone then ${PHASE_MS / 1000} s beside a free account flooding on ${CONNECTIONS} connections, per platform, both platforms in one run. Target: ratio ≤ ${TARGET_RATIO}×.`,
    '',
    '| platform | light p50 alone (ms) | light p50 beside the flood (ms) | p50 ratio | light p95 alone (ms) | light p95 beside the flood (ms) | flood served a second | flood refused a second |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  await writeReport('flood', 'One account flooding beside another tenant', table);
}

await main();
