/**
 * `npm run bench:calls` with BENCH_BASELINE_DIR: this checkout's platform against another
 * checkout's, round by round (bench/calls.ts), as one table for docs/performance.md.
 */
import { median } from './report.ts';

/** One gateway's figures over one repeat's calls at one level. */
export interface Measure {
  p50: number;
  p99: number;
  perSecond: number;
  cpuMsPerCall: number;
}

const fmt = (n: number) => n.toFixed(2);

export type Round = {
  results: Map<number, Map<string, Measure[]>>;
  rss: Map<string, number[]>;
  /** CPU ms per call of each platform in each of the round's same windows (bench/same-windows.ts). */
  windows?: Map<string, number[]>;
};

/**
 * The checkout against BENCH_BASELINE_DIR: per round, each platform's median of each figure, and
 * their ratio; the table gives the median of the rounds' ratios, with each round's beside it, and
 * whether the checkout is within 5% of the baseline on each.
 */
export function baselineComparison(
  rounds: Round[],
  {
    levels,
    rssLevel,
    baselineName,
    intro,
    sameWindows,
  }: {
    levels: number[];
    rssLevel: number;
    baselineName: string;
    intro: string;
    /** The rounds' same windows: at which level, and the second platform of the checkout measured in them. */
    sameWindows?: { level: number; calibration: string };
  },
): string {
  const figure = (round: Round, name: string, c: number, pick: (m: Measure, r: number) => number) => {
    const at = (round.results.get(c) as Map<string, Measure[]>).get(name) as Measure[];
    return median(at.map(pick));
  };
  const addedP50 = (round: Round, name: string, c: number) => {
    const direct = (round.results.get(c) as Map<string, Measure[]>).get('direct') as Measure[];
    return figure(round, name, c, (m, r) => m.p50 - (direct[r] as Measure).p50);
  };
  const rows: { label: string; of: (round: Round, name: string) => number; higherIsWorse: boolean }[] = [];
  for (const c of levels) {
    rows.push({
      label: `CPU ms per call at ${c}`,
      of: (r, n) => figure(r, n, c, (m) => m.cpuMsPerCall),
      higherIsWorse: true,
    });
    rows.push({
      label: `calls/s at ${c}`,
      of: (r, n) => figure(r, n, c, (m) => m.perSecond),
      higherIsWorse: false,
    });
    rows.push({ label: `added p50 ms at ${c}`, of: (r, n) => addedP50(r, n, c), higherIsWorse: true });
  }
  rows.push({
    label: `peak RSS MB at ${rssLevel}`,
    of: (r, n) => median(r.rss.get(n) as number[]),
    higherIsWorse: true,
  });
  const lines = [
    `${intro} Each figure is a platform's median over a round's repeats; "÷" is the median over the rounds of this checkout's figure divided by the baseline's, and a row is within 5% when that ratio is no more than 5% the worse way.`,
    '',
    `| figure | this checkout | ${baselineName} | ÷ | each round's ÷ | within 5% |`,
    '| --- | ---: | ---: | ---: | --- | --- |',
  ];
  for (const row of rows) {
    const mine = rounds.map((r) => row.of(r, 'agenthost'));
    const theirs = rounds.map((r) => row.of(r, baselineName));
    const ratios = mine.map((x, i) => x / (theirs[i] as number));
    const ratio = median(ratios);
    const ok = row.higherIsWorse ? ratio <= 1.05 : ratio >= 0.95;
    lines.push(
      `| ${row.label} | ${fmt(median(mine))} | ${fmt(median(theirs))} | ${fmt(ratio)} | ${ratios.map((x) => fmt(x)).join(', ')} | ${ok ? 'yes' : '**no**'} |`,
    );
  }
  if (sameWindows) lines.push(...sameWindowRows(rounds, baselineName, sameWindows));
  return lines.join('\n');
}

/**
 * The rows of the same windows: the checkout's two traced platforms against the baseline, each and
 * pooled (the pooled row carries the verdict: two estimates of one cost, each with its own), and
 * the two against each other (the calibration: how far one build measured against itself spreads).
 * "÷" is the median over every window of the window's ratio, each round's the median of its
 * windows'.
 */
function sameWindowRows(
  rounds: Round[],
  baselineName: string,
  { level, calibration }: { level: number; calibration: string },
): string[] {
  const perWindow = (r: Round, name: string) => r.windows?.get(name) ?? [];
  const ratiosOf = (r: Round, as: string[], b: string) =>
    as.flatMap((a) => perWindow(r, a).map((x, w) => x / (perWindow(r, b)[w] as number)));
  const row = (label: string, as: string[], b: string, kind: 'verdict' | 'estimate' | 'calibration') => {
    const ratios = rounds.map((r) => ratiosOf(r, as, b));
    const ratio = median(ratios.flat());
    const mine = median(rounds.flatMap((r) => as.flatMap((a) => perWindow(r, a))));
    const theirs = median(rounds.flatMap((r) => perWindow(r, b)));
    const within = kind === 'verdict' ? (ratio <= 1.05 ? 'yes' : '**no**') : kind;
    return `| ${label} | ${fmt(mine)} | ${fmt(theirs)} | ${ratio.toFixed(3)} | ${ratios.map((x) => fmt(median(x))).join(', ')} | ${within} |`;
  };
  const windows = rounds.reduce((n, r) => n + perWindow(r, 'agenthost').length, 0);
  return [
    '',
    `Over the same windows (${windows} in all, the platforms loaded at the same time with ${level} calls in flight each; "÷" the median of every window's ratio, each round's the median of its windows'):`,
    '',
    `| CPU per call at ${level}, A against B | A's ms | B's ms | ÷ | each round's ÷ | within 5% |`,
    '| --- | ---: | ---: | ---: | --- | --- |',
    row(`"agenthost" against "${baselineName}"`, ['agenthost'], baselineName, 'estimate'),
    row(`"${calibration}" against "${baselineName}"`, [calibration], baselineName, 'estimate'),
    row(`both traced against "${baselineName}", pooled`, ['agenthost', calibration], baselineName, 'verdict'),
    row(`"agenthost" against "${calibration}"`, ['agenthost'], calibration, 'calibration'),
  ];
}
