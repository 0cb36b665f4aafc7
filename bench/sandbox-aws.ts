/**
 * `npm run bench:sandbox-aws`: tool calls on the emulated AWS deployment at the cloud's timing
 * (docs/sandbox-aws.md, "Warm runners"). Every emulated ECS task takes BENCH_TASK_START_MS (default
 * 20000, Fargate's quickest) to start (PLATFORM_EMULATOR_TASK_START_MS), and the deployment runs
 * its default warm runner pool (floor 2, ceiling 10). Two accounts each publish a tool agent whose
 * command is `cat`; each calls it once (the cold start: no runner is warm yet) and the bench waits
 * one task start for the pool's refill to come up. Then:
 *  - sequential calls of the two workspaces, alternating (BENCH_CALLS, default 20): p50 and max;
 *  - 12 calls at concurrency 4 by one workspace: p50 and max.
 * The targets (p50 at most 1.5 s and every call at most 3 s alternating; p50 at most 3 s at
 * concurrency 4) are written beside the figures in docs/performance.md.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDeployment } from '../test/helpers/deployment.ts';
import { publishCatTool } from './aws-cost-agents.ts';
import { machineLine, quantile, writeReport } from './report.ts';

const TASK_START_MS = Number(process.env.BENCH_TASK_START_MS ?? 20_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 20);
const CONCURRENT_CALLS = 12;
const CONCURRENCY = 4;

const d = await startDeployment('emulated', { PLATFORM_EMULATOR_TASK_START_MS: String(TASK_START_MS) });
try {
  const workspaces = await Promise.all(
    ['bench-a', 'bench-b'].map(async (org) => {
      const { key } = await d.createAccount(org);
      await publishCatTool(d, key, 'echo');
      return { org, key };
    }),
  );
  const call = async (w: { org: string; key: string }, n: number): Promise<number> => {
    const started = performance.now();
    const res = await d.request('POST', `/${w.org}/echo/v1/run`, { key: w.key, body: { n } });
    assert.equal(res.status, 200, res.text);
    return performance.now() - started;
  };

  process.stdout.write(`cold calls (each waits a task start of ${TASK_START_MS} ms)…\n`);
  const cold = [];
  for (const w of workspaces) cold.push(await call(w, 0));
  // The refill the cold calls set off starts tasks too: wait one start for them to be up.
  await sleep(TASK_START_MS + 3000);

  process.stdout.write(`${CALLS} sequential calls, the two workspaces alternating…\n`);
  const alternating: number[] = [];
  for (let i = 0; i < CALLS; i++)
    alternating.push(await call(workspaces[i % 2] as (typeof workspaces)[0], i));

  process.stdout.write(`${CONCURRENT_CALLS} calls at concurrency ${CONCURRENCY} by one workspace…\n`);
  const concurrent: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CONCURRENT_CALLS)
        concurrent.push(await call(workspaces[0] as (typeof workspaces)[0], next++));
    }),
  );

  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const sorted = (v: number[]) => [...v].sort((a, b) => a - b);
  const alt = sorted(alternating);
  const conc = sorted(concurrent);
  const rows = [
    `| first call of each workspace, in turn (the pool empty before the first) | ${cold.map(s).join(', ')} | | |`,
    `| ${CALLS} sequential calls, two workspaces alternating | ${s(quantile(alt, 0.5))} | ${s(alt.at(-1) ?? 0)} | p50 ≤ 1.50 s, each ≤ 3.00 s: ${quantile(alt, 0.5) <= 1500 && (alt.at(-1) ?? 0) <= 3000 ? 'met' : '**not met**'} |`,
    `| ${CONCURRENT_CALLS} calls at concurrency ${CONCURRENCY}, one workspace | ${s(quantile(conc, 0.5))} | ${s(conc.at(-1) ?? 0)} | p50 ≤ 3.00 s: ${quantile(conc, 0.5) <= 3000 ? 'met' : '**not met**'} |`,
  ];
  const table = [
    `${machineLine()}. Emulated deployment, every ECS task starting in ${TASK_START_MS} ms, the default pool (floor 2, ceiling 10); a tool agent running \`cat\`.`,
    '',
    '| calls | p50 | max | target |',
    '| --- | --: | --: | --- |',
    ...rows,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  await writeReport('sandbox-aws', 'Sandboxed runs on AWS at the cloud’s timing: warm runners', table);
} finally {
  await d.close();
}
