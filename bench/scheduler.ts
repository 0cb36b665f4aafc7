/**
 * `npm run bench:scheduler`: 1,000 cron schedules due in the same minute, local mode.
 *
 * The platform's dependencies are built as `npm start` builds them (SQLite in a fresh data dir,
 * the in-process loop with its default concurrency), with the Anthropic provider pointed at a
 * zero-delay fake on loopback in its own process (bench/fake-llm-process.ts), so each run is a
 * real call of a prompt agent: quota admission, the AI SDK request, the call record, the run
 * record and the failure-streak write. The clock is the system clock shifted so that the next
 * whole minute is a few seconds after the schedules are created; nothing else is faked.
 *
 * Three rows, each repeated (BENCH_REPEATS, default 3) in a fresh data dir: the schedules of ten
 * enterprise accounts (100 each: a platform's tenants at the top of a minute); the same under the
 * loop's former bound of 64 runs at once (the trade of start delay against event-loop stalls); and
 * all of them of one enterprise account, whose runs at once its tier bounds. A
 * run's start is its record's started_at: the moment its agent call began (after the claim, the
 * creator and version lookups and the in-flight marker), so a run queued behind others is late.
 * Reports the last claim, fire delay p50, p99 and max (start minus slot), when the calls asked the
 * model, the time until every slot has run, the longest event-loop stall, medians over the
 * repeats, and whether the target (p99 within 1 s) is met.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createAccount } from '../functions/core/accounts/account.ts';
import { parseManifest } from '../functions/core/agents/manifest.ts';
import { publishVersion } from '../functions/core/agents/publish.ts';
import type { AuthContext } from '../functions/core/api-keys/api-keys.ts';
import { scheduleKeys } from '../functions/core/schedules/schedule-record.ts';
import { type RunRecord, runFromItem, runKeys } from '../functions/core/schedules/schedule-run-record.ts';
import { createSchedule } from '../functions/core/schedules/schedules.ts';
import { startScheduleLoop } from '../functions/jobs/local-schedule-loop.ts';
import { parseConfig } from '../functions/platform/config.ts';
import { createDeps } from '../functions/platform/deps.ts';
import { queryAll } from '../functions/ports/store.ts';
import { createLogger } from '../functions/shared/logger.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 1000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** Seconds between the start of set-up and the shared slot: room to create the schedules. */
const LEAD_SECONDS = Number(process.env.BENCH_LEAD_SECONDS ?? 8);
/** The target: every schedule starts within this of its slot, at p99. */
const TARGET_P99_MS = 1000;

interface Shape {
  label: string;
  accounts: number;
  /** The loop's bound on runs at once, when not its default. */
  concurrency?: number;
}
const SHAPES: Shape[] = [
  { label: 'ten accounts, 100 each', accounts: 10 },
  // The same burst under the loop's former bound: starts later, shorter stalls of the event loop.
  { label: 'ten accounts, 100 each, at most 64 at once', accounts: 10, concurrency: 64 },
  { label: 'one account', accounts: 1 },
];

interface Burst {
  /** The longest the event loop was held at once during the burst (monitorEventLoopDelay). */
  stall: number;
  /** The last slot claim (its claimed_at) after the slot. */
  claimed: number;
  /** p99 of the time each run's model request was made, after the slot. */
  modelP99: number;
  p50: number;
  p99: number;
  max: number;
  allDone: number;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one burst's measurement, its phases sharing the platform it started and stops
async function burst(anthropicUrl: string, shape: Shape): Promise<{ burst: Burst; concurrency: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-sched-'));
  // The next whole minute, LEAD_SECONDS from now on the shifted clock.
  const realNow = Date.now();
  const slotAt = Math.ceil((realNow + LEAD_SECONDS * 1000) / 60_000) * 60_000;
  const offset = slotAt - (realNow + LEAD_SECONDS * 1000);
  const clock = { now: () => new Date(Date.now() + offset) };
  const slotIso = new Date(slotAt).toISOString();
  const config = parseConfig({
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_LOG_LEVEL: 'silent',
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    ANTHROPIC_BASE_URL: anthropicUrl,
    ...(shape.concurrency ? { PLATFORM_SCHEDULER_CONCURRENCY: String(shape.concurrency) } : {}),
  });
  const deps = await createDeps(config, { clock, logger: createLogger('silent') });
  // When each run's request to the model was made: the call's admission, records and template
  // are done by then (the platform's part of a call, which the runs of a burst share one core for).
  const modelAt: number[] = [];
  const llm = deps.llm;
  deps.llm = {
    generate: (request) => {
      modelAt.push(clock.now().getTime() - slotAt);
      return llm.generate(request);
    },
  };
  try {
    const ids: string[] = [];
    const t0 = performance.now();
    for (let a = 0; a < shape.accounts; a++) {
      const org = `bench${a}`;
      const account = await createAccount(deps, { org, tier: 'enterprise' });
      const auth: AuthContext = {
        accountId: account.account.id,
        org,
        tier: 'enterprise',
        personalWorkspaceId: account.workspace_id,
        keyId: 'bench',
        agent: null,
      };
      const parsed = parseManifest({
        name: 'fast',
        description: 'Answers at once.',
        supported_providers: ['anthropic'],
        prompt_template: 'Go',
      });
      if (!parsed.ok) throw new Error('bench manifest invalid');
      await publishVersion(deps, {
        workspace: { id: account.workspace_id, slug: org },
        manifest: parsed.manifest,
        skillFiles: null,
        publishedBy: account.account.id,
      });
      const count = Math.floor(SCHEDULES / shape.accounts) + (a < SCHEDULES % shape.accounts ? 1 : 0);
      for (let i = 0; i < count; i++) {
        const s = await createSchedule(deps, auth, account.workspace_id, {
          agent: `${org}/fast`,
          type: 'cron',
          cron_expression: '* * * * *',
          timezone: 'UTC',
          input_data: {},
          enabled: true,
        });
        if (s.next_run_at !== slotIso) {
          throw new Error(
            `set-up took too long: a schedule is due at ${s.next_run_at}; raise BENCH_LEAD_SECONDS`,
          );
        }
        ids.push(s.id);
      }
    }
    process.stdout.write(
      `${shape.label}: created ${ids.length} schedules in ${Math.round(performance.now() - t0)} ms; slot ${slotIso}\n`,
    );
    const loop = startScheduleLoop(deps);
    // What the burst costs everything else on the event loop (the HTTP API shares it).
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    const deadline = slotAt + 120_000;
    // Waits without reading the runs (which would load the process under test): until no
    // schedule is due at the slot any more, then until every claimed run has ended.
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      if (clock.now().getTime() < slotAt - 1000) continue;
      stalls.enable();
      if (clock.now().getTime() < slotAt + 250) continue;
      const due = await deps.store.query({
        index: 'gsi2',
        pk: scheduleKeys.due,
        sk: { lt: `${slotIso}#~` },
        limit: 1,
      });
      if (due.items.length === 0 || clock.now().getTime() > deadline) break;
    }
    await loop.idle();
    stalls.disable();
    await loop.stop();
    const runs: RunRecord[] = [];
    for (const id of ids)
      runs.push(...(await queryAll(deps.store, { pk: runKeys.ofSchedule(id) })).map(runFromItem));
    const delays = runs.map((r) => Date.parse(r.started_at) - slotAt).sort((a, b) => a - b);
    const allDone = Math.max(...runs.map((r) => Date.parse(r.finished_at))) - slotAt;
    const failed = runs.filter((r) => r.status !== 'success').length;
    const wrongSlot = runs.filter((r) => r.scheduled_time !== slotIso).length;
    const once = new Set(runs.map((r) => r.schedule_id)).size;
    let claimed = 0;
    for (const id of ids) {
      const claim = await deps.store.get(scheduleKeys.slot(id, slotIso));
      claimed = Math.max(claimed, Date.parse(String(claim?.claimed_at)) - slotAt);
    }
    modelAt.sort((a, b) => a - b);
    const result = {
      stall: Math.round(stalls.max / 1e6),
      claimed,
      modelP99: quantile(modelAt, 0.99),
      p50: quantile(delays, 0.5),
      p99: quantile(delays, 0.99),
      max: delays.at(-1) ?? 0,
      allDone,
    };
    process.stdout.write(
      `  ${runs.length}/${SCHEDULES} runs (${failed} failed, ${wrongSlot} for another slot); all claimed ${claimed} ms after the slot; fire delay p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms; model requested p99 ${result.modelP99} ms; longest event-loop stall ${result.stall} ms; all finished ${allDone} ms after the slot\n`,
    );
    const errors = new Set(runs.filter((r) => r.status !== 'success').map((r) => r.error));
    if (errors.size > 0) process.stdout.write(`  failures: ${[...errors].slice(0, 3).join('; ')}\n`);
    if (runs.length !== SCHEDULES || once !== SCHEDULES || failed > 0 || wrongSlot > 0)
      throw new Error('not every schedule ran exactly once, successfully, for its slot');
    return { burst: result, concurrency: config.schedulerConcurrency };
  } finally {
    await deps.store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const fake = spawn(process.execPath, [join(ROOT, 'bench', 'fake-llm-process.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [firstLine] = (await once(fake.stdout, 'data')) as [Buffer];
  const anthropicUrl = firstLine.toString().trim().split('\n')[0] as string;
  const load = loadavg()[0]?.toFixed(1);
  try {
    const results = new Map<Shape, Burst[]>(SHAPES.map((s) => [s, []]));
    let concurrency = 0;
    for (let r = 0; r < REPEATS; r++) {
      for (const shape of SHAPES) {
        const out = await burst(anthropicUrl, shape);
        results.get(shape)?.push(out.burst);
        if (!shape.concurrency) concurrency = out.concurrency;
      }
    }
    const med = (shape: Shape, key: keyof Burst) =>
      Math.round(median((results.get(shape) ?? []).map((b) => b[key])));
    const rows = SHAPES.map((shape) => {
      const met = med(shape, 'p99') <= TARGET_P99_MS ? 'met' : 'not met';
      return `| ${SCHEDULES} | ${shape.label} | ${med(shape, 'claimed')} | ${med(shape, 'p50')} | ${med(shape, 'p99')} | ${med(shape, 'max')} | ${med(shape, 'modelP99')} | ${med(shape, 'allDone')} | ${med(shape, 'stall')} | ${met} |`;
    });
    const table = [
      `${machineLine()}; load average ${load} when it began; ${SCHEDULES} schedules \`* * * * *\` due in the same minute; loop concurrency ${concurrency} (its default) unless the row says otherwise; zero-delay fake LLM in its own process; medians of ${REPEATS} repeats; run ${new Date().toISOString().slice(0, 10)}.`,
      '',
      '| schedules | creators | all claimed after slot ms | fire delay p50 ms | fire delay p99 ms | fire delay max ms | model requested p99 ms | all finished after slot ms | longest event-loop stall ms | p99 within 1 s |',
      '| --------: | -------- | ------------------------: | ----------------: | ----------------: | ----------------: | ---------------------: | -------------------------: | --------------------------: | -------------- |',
      ...rows,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    await writeReport('scheduler', 'Scheduler: 1,000 schedules due in one minute', table);
  } finally {
    fake.stdin.end();
    await once(fake, 'exit');
  }
}

await main();
