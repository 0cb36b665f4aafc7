/**
 * `npm run bench:scheduler`: 1,000 cron schedules due in the same minute, local mode.
 *
 * The platform's dependencies are built as `npm start` builds them (SQLite in a fresh data dir,
 * the in-process loop with its default concurrency), with the Anthropic provider pointed at a
 * zero-delay fake on loopback in its own process (bench/fake-llm-process.ts), so each run is a real call of a prompt agent: quota admission,
 * the AI SDK request, the call record, the run record and the failure-streak write. The clock is
 * the system clock shifted so that the next whole minute is a few seconds after the schedules are
 * created; nothing else is faked. Reports the fire delay (a run's start minus its scheduled time)
 * at p50, p99 and max, and the time until every slot has run, in docs/performance.md.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccount } from '../functions/core/accounts/account.ts';
import { parseManifest } from '../functions/core/agents/manifest.ts';
import { publishVersion } from '../functions/core/agents/publish.ts';
import type { AuthContext } from '../functions/core/api-keys/api-keys.ts';
import { runKeys } from '../functions/core/schedules/schedule-run-record.ts';
import { createSchedule } from '../functions/core/schedules/schedules.ts';
import { startScheduleLoop } from '../functions/jobs/local-schedule-loop.ts';
import { parseConfig } from '../functions/platform/config.ts';
import { createDeps } from '../functions/platform/deps.ts';
import { queryAll } from '../functions/ports/store.ts';
import { createLogger } from '../functions/shared/logger.ts';
import { machineLine, quantile, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 1000);
/** Seconds between the start of set-up and the shared slot: room to create the schedules. */
const LEAD_SECONDS = Number(process.env.BENCH_LEAD_SECONDS ?? 20);

async function main(): Promise<void> {
  const fake = spawn(process.execPath, [join(ROOT, 'bench', 'fake-llm-process.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [firstLine] = (await once(fake.stdout, 'data')) as [Buffer];
  const anthropicUrl = firstLine.toString().trim().split('\n')[0] as string;
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-sched-'));
  // The next whole minute, LEAD_SECONDS from now on the shifted clock.
  const realNow = Date.now();
  const slotAt = Math.ceil((realNow + LEAD_SECONDS * 1000) / 60_000) * 60_000;
  const offset = slotAt - (realNow + LEAD_SECONDS * 1000);
  const clock = { now: () => new Date(Date.now() + offset) };
  const config = parseConfig({
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_LOG_LEVEL: 'silent',
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    ANTHROPIC_BASE_URL: anthropicUrl,
  });
  const deps = await createDeps(config, { clock, logger: createLogger('silent') });
  try {
    const account = await createAccount(deps, { org: 'bench', tier: 'enterprise' });
    const auth: AuthContext = {
      accountId: account.account.id,
      org: 'bench',
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
      workspace: { id: account.workspace_id, slug: 'bench' },
      manifest: parsed.manifest,
      skillFiles: null,
      publishedBy: account.account.id,
    });
    const ids: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < SCHEDULES; i++) {
      const s = await createSchedule(deps, auth, account.workspace_id, {
        agent: 'bench/fast',
        type: 'cron',
        cron_expression: '* * * * *',
        timezone: 'UTC',
        input_data: {},
        enabled: true,
      });
      if (s.next_run_at !== new Date(slotAt).toISOString()) {
        throw new Error(
          `set-up took too long: schedule ${i} is due at ${s.next_run_at}; raise BENCH_LEAD_SECONDS`,
        );
      }
      ids.push(s.id);
    }
    process.stdout.write(
      `created ${SCHEDULES} schedules in ${Math.round(performance.now() - t0)} ms; slot ${new Date(slotAt).toISOString()}\n`,
    );
    const loop = startScheduleLoop(deps);
    const deadline = Date.now() + LEAD_SECONDS * 1000 + 120_000;
    let runs: { started_at: string; finished_at: string; status: string; scheduled_time: string }[] = [];
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      if (clock.now().getTime() < slotAt) continue;
      runs = [];
      for (const id of ids)
        runs.push(...((await queryAll(deps.store, { pk: runKeys.ofSchedule(id) })) as never[]));
      if (runs.length >= SCHEDULES || Date.now() > deadline) break;
    }
    await loop.stop();
    const delays = runs.map((r) => Date.parse(r.started_at) - slotAt).sort((a, b) => a - b);
    const allDone = Math.max(...runs.map((r) => Date.parse(r.finished_at))) - slotAt;
    const failed = runs.filter((r) => r.status !== 'success').length;
    const wrongSlot = runs.filter((r) => r.scheduled_time !== new Date(slotAt).toISOString()).length;
    const summary = {
      runs: runs.length,
      failed,
      wrongSlot,
      p50: quantile(delays, 0.5),
      p99: quantile(delays, 0.99),
      max: delays.at(-1) ?? 0,
      allDone,
    };
    process.stdout.write(
      `${summary.runs}/${SCHEDULES} runs (${failed} failed, ${wrongSlot} for another slot); fire delay p50 ${summary.p50} ms, p99 ${summary.p99} ms, max ${summary.max} ms; all finished ${allDone} ms after the slot\n`,
    );
    if (summary.runs !== SCHEDULES || failed > 0 || wrongSlot > 0)
      throw new Error('not every schedule ran once, successfully');
    const table = [
      `${machineLine()}; ${SCHEDULES} schedules \`* * * * *\` due in the same minute; loop concurrency ${config.schedulerConcurrency}; zero-delay fake LLM in its own process; run ${new Date().toISOString().slice(0, 10)}.`,
      '',
      '| schedules | runs | fire delay p50 ms | fire delay p99 ms | fire delay max ms | all finished after slot ms |',
      '| --------: | ---: | ----------------: | ----------------: | ----------------: | -------------------------: |',
      `| ${SCHEDULES} | ${summary.runs} | ${summary.p50} | ${summary.p99} | ${summary.max} | ${allDone} |`,
    ].join('\n');
    await writeReport('scheduler', 'Scheduler: 1,000 schedules due in one minute', table);
  } finally {
    await deps.store.close();
    fake.stdin.end();
    await once(fake, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
