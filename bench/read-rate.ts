/**
 * `npm run bench:read-rate`: what one account pulling large list pages does to another tenant's
 * latency, without the per-account request rate and with it (docs/http.md,
 * "Request rate"), side by side in one run, on the two platforms of bench/neighbour-load.ts.
 *
 * On each, a workspace of the light tenant holds 120 tasks of 50,000-character descriptions, so a
 * page of them is about 6 MB, and the heavy (free) account is a member of it. Each repeat
 * measures, on each platform: the light tenant's GET /tasks, one at a time, for BENCH_PHASE_MS
 * alone (p50), then for as long again while the heavy account pulls its 6 MB page four at a time.
 * The table gives the median over the repeats of the light p50s and of their ratio (loaded /
 * alone), and what the heavy account got. Results go to docs/performance.md.
 */

import {
  accountIdOf,
  api,
  type HeavyResult,
  lightLatencies,
  type Platform,
  startHeavy,
  startPlatforms,
  stopPlatforms,
} from './neighbour-load.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 8000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BIG_TASKS = 120;
const DESCRIPTION = 'd'.repeat(50_000);
const PULLERS = 4;

/** The big pages on a started platform, in a workspace the heavy account joins (module comment). */
async function fill(p: Platform): Promise<string> {
  const ws = await api<{ id: string }>(p.url, p.lightKey, 'POST', '/workspaces', { name: 'Big pages' });
  for (let i = 0; i < BIG_TASKS; i++) {
    await api(p.url, p.lightKey, 'POST', '/tasks', {
      title: `big ${i}`,
      description: DESCRIPTION,
      workspace_id: ws.body.id,
    });
  }
  // Invited by its owner, accepted.
  const heavyId = await accountIdOf(p.url, p.heavyKey);
  const invitation = await api<{ id: string }>(
    p.url,
    p.lightKey,
    'POST',
    `/workspaces/${ws.body.id}/invite`,
    {
      account_id: heavyId,
    },
  );
  await api(p.url, p.heavyKey, 'POST', `/invitations/${invitation.body.id}/accept`);
  return ws.body.id;
}

interface Round {
  alone: number;
  loaded: number;
  heavy: HeavyResult;
}

async function main(): Promise<void> {
  const platforms = await startPlatforms();
  const rounds = new Map<string, Round[]>(platforms.map((p) => [p.name, []]));
  try {
    const bigWorkspaces = new Map<string, string>();
    for (const p of platforms) bigWorkspaces.set(p.name, await fill(p));
    for (let r = 0; r < REPEATS; r++) {
      for (const p of r % 2 ? [...platforms].reverse() : platforms) {
        const alone = await lightLatencies(p, PHASE_MS);
        const pulling = await startHeavy(p, {
          path: `/workspaces/${bigWorkspaces.get(p.name)}/tasks?limit=200`,
          connections: PULLERS,
          ms: PHASE_MS,
        });
        const [loaded, heavy] = await Promise.all([lightLatencies(p, PHASE_MS), pulling]);
        const round = { alone: quantile(alone, 0.5), loaded: quantile(loaded, 0.5), heavy };
        rounds.get(p.name)?.push(round);
        process.stdout.write(
          `${p.name}: light p50 ${round.alone.toFixed(2)} ms alone, ${round.loaded.toFixed(2)} ms loaded; heavy ${heavy.served} pages (${(heavy.bytes / 1e6).toFixed(0)} MB), ${heavy.refused} refused\n`,
        );
      }
    }
  } finally {
    await stopPlatforms(platforms);
  }
  const f = (n: number) => n.toFixed(2);
  const rows = platforms.map((p) => {
    const rs = rounds.get(p.name) ?? [];
    const perSecond = (n: (r: Round) => number) => median(rs.map((r) => n(r) / (PHASE_MS / 1000)));
    return `| ${p.name} | ${f(median(rs.map((r) => r.alone)))} | ${f(median(rs.map((r) => r.loaded)))} | ${f(median(rs.map((r) => r.loaded / r.alone)))} | ${perSecond((r) => r.heavy.served).toFixed(1)} | ${f(perSecond((r) => r.heavy.bytes) / 1e6)} | ${perSecond((r) => r.heavy.refused).toFixed(0)} |`;
  });
  const ratio = (name: string) => median((rounds.get(name) ?? []).map((r) => r.loaded / r.alone));
  const table = [
    `${machineLine()}; ${REPEATS} repeats of ${PHASE_MS / 1000} s alone then ${PHASE_MS / 1000} s beside ${PULLERS} pullers of a ${((BIG_TASKS * DESCRIPTION.length) / 1e6).toFixed(0)} MB page (a free account), per platform, both platforms in one run.`,
    '',
    '| platform | light p50 alone (ms) | light p50 beside the puller (ms) | ratio | heavy pages a second | heavy MB a second | heavy refusals a second |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `The other tenant's p50 beside the puller, against its p50 alone: ${f(ratio('without the rate'))}× without the rate, ${f(ratio('with the rate'))}× with it.`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  await writeReport('read-rate', 'A free account pulling large pages beside another tenant', table);
}

await main();
