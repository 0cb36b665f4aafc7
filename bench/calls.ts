/**
 * `npm run bench:calls`: the gateway bench: what the call gateway adds on top of the
 * model call, against a peer gateway and the floor for one Node hop, side by side in one run.
 *
 * A zero-delay fake model speaking the OpenAI wire format runs in its own process
 * (bench/fake-llm-process.ts). In front of it, each in its own process on loopback:
 * - agenthost: `agenthost start` (local mode, SQLite in a temp dir), its OpenAI provider pointed at
 *   the fake, called as a prompt agent (`POST /local/bench-echo/v1/run`);
 * - Portkey's open-source AI gateway (@portkey-ai/gateway, bench/portkey-process.ts), called with
 *   the request agenthost sends to the model and the fake as its custom host;
 * - a bare Node proxy (bench/node-proxy.ts), the same request.
 * This process generates the load and calls the fake directly with the same request as the
 * baseline. At concurrency 1 and 16, each repeat measures the direct call and each gateway (in an
 * order rotated per repeat): latency p50 (the "added" p50 is the gateway's minus the direct call's
 * in the same repeat), calls per second, and the gateway's CPU per call (user plus system time of
 * its process tree from /proc over the calls); then the peak RSS of each gateway's process tree at
 * concurrency 64. The table gives the median over the repeats, and for agenthost against Portkey
 * the median of the per-repeat ratios, with a line per issue-16 target. Results go to
 * docs/performance.md.
 *
 * BENCH_BASELINE=<commit> (checked out for the run) or BENCH_BASELINE_DIR=<checkout> also runs that
 * commit's platform as a fourth gateway ("agenthost before"; bench/baseline-checkout.ts), so a
 * change to the call path is measured against the code before it, or against a named commit
 * across many changes, in the same run.
 * BENCH_TRACES_OFF=1 makes the fourth this checkout with tracing off, and each round begins with the
 * two, and a second traced platform, measured over the same windows (WINDOW_LEVEL): the repeats
 * that follow meet the two warm (about 30,000 calls each), where before they began after 300.
 */

import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { type BaselineCheckout, baselineCheckout, commitOf } from './baseline-checkout.ts';
import { benchDispatcher, benchPlatformEnv, callAgent, publishAgent } from './bench-agent.ts';
import { startProcess, stop } from './bench-process.ts';
import { baselineComparison, type Measure, type Round } from './calls-baseline.ts';
import { driveCalls } from './drive-calls.ts';
import { platformStartArgs } from './platform-command.ts';
import { treeCpuMs, treeRssMb } from './proc-stats.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';
import { cpuInSameWindows } from './same-windows.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** BENCH_LEVELS=16 (with --no-write) measures one level only: for a profile of the loaded case. */
const LEVELS = (process.env.BENCH_LEVELS ?? '1,16').split(',').map(Number);
const RSS_LEVEL = 64;
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const WARMUP = 300;
/**
 * BENCH_TRACES_OFF=1: the baseline is this checkout with PLATFORM_TRACES=off (docs/traces.md), so
 * what recording every call's spans costs is measured side by side.
 */
const TRACES_OFF = process.env.BENCH_TRACES_OFF === '1';
/** What the table calls the BENCH_BASELINE_DIR checkout (BENCH_BASELINE_NAME, for an A/B of a variant). */
const BASELINE_NAME = process.env.BENCH_BASELINE_NAME ?? (TRACES_OFF ? 'traces off' : 'agenthost before');

/**
 * Against traces off, each round begins with the traced and untraced platforms (and a second traced
 * one, AGAIN) loaded at the same time, WINDOW_LEVEL calls in flight each, and their CPU per call
 * read over the same BENCH_WINDOWS windows of BENCH_WINDOW_MS (bench/same-windows.ts): the table's
 * figure for what tracing costs, where the repeats one after the other spread too far.
 */
const WINDOW_LEVEL = 16;
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 4);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 4000);
const AGAIN = 'traces on, a second platform';
/**
 * Calls each answers under the windows' load before the first: V8 is still compiling the call path
 * for its first tens of thousands of calls, more of it on the traced side (docs/performance.md).
 */
const WINDOW_WARMUP = Number(process.env.BENCH_WINDOW_WARMUP ?? 20_000);

/** One way of reaching the model: `pid` is the gateway's process (none for the direct call). */
interface Target {
  name: string;
  pid?: number;
  send: () => Promise<number>;
}

async function measure(target: Target, concurrency: number): Promise<Measure> {
  const cpu0 = target.pid ? treeCpuMs(target.pid) : 0;
  const { samples, wallMs } = await driveCalls(concurrency, CALLS, target.send);
  const cpu1 = target.pid ? treeCpuMs(target.pid) : 0;
  const sorted = samples.sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    perSecond: (samples.length / wallMs) * 1000,
    cpuMsPerCall: (cpu1 - cpu0) / samples.length,
  };
}

/** The peak RSS (MB) of the target's process tree while CALLS calls run at RSS_LEVEL in flight. */
async function peakRss(target: Target): Promise<number> {
  const pid = target.pid as number;
  let peak = treeRssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssMb(pid));
  }, 50);
  try {
    await driveCalls(RSS_LEVEL, CALLS, target.send);
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, treeRssMb(pid));
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** The short commit a checkout is at (its working tree may differ: the bench says what it ran). */
/** The median of the per-repeat ratios of `a` to `b`. */
const ratio = (a: number[], b: number[]) => median(a.map((x, r) => x / (b[r] as number)));

/**
 * Per level, over the repeats: each gateway's added p50, calls per second and CPU per call (medians),
 * and agenthost's speed-up over Portkey; as the report's table rows and as progress lines.
 */
function levelSummaries(results: Map<number, Map<string, Measure[]>>, names: string[]) {
  const rows: string[] = [];
  const lines: string[] = [];
  const at = (c: number, name: string) => (results.get(c) as Map<string, Measure[]>).get(name) as Measure[];
  const added = (c: number, name: string) =>
    at(c, name).map((m, r) => m.p50 - (at(c, 'direct')[r] as Measure).p50);
  const summary = new Map<
    number,
    { addedP50: number[]; perSecond: number[]; cpu: number[]; speedup: number }
  >();
  for (const c of LEVELS) {
    const addedP50 = names.map((n) => median(added(c, n)));
    const perSecond = names.map((n) => median(at(c, n).map((m) => m.perSecond)));
    const cpu = names.map((n) => median(at(c, n).map((m) => m.cpuMsPerCall)));
    const speedup = ratio(
      at(c, 'agenthost').map((m) => m.perSecond),
      at(c, 'Portkey').map((m) => m.perSecond),
    );
    const cpuRatio = ratio(
      at(c, 'agenthost').map((m) => m.cpuMsPerCall),
      at(c, 'Portkey').map((m) => m.cpuMsPerCall),
    );
    summary.set(c, { addedP50, perSecond, cpu, speedup });
    const directP50 = median(at(c, 'direct').map((m) => m.p50));
    rows.push(
      `| ${c} | ${fmt(directP50)} | ${addedP50.map((x) => fmt(x)).join(' | ')} | ${perSecond.map((x) => Math.round(x)).join(' | ')} | ${cpu.map((x) => fmt(x)).join(' / ')} | ${fmt(speedup)} | ${fmt(cpuRatio)} |`,
    );
    lines.push(
      `concurrency ${c}: direct p50 ${fmt(directP50)} ms; ${names
        .map(
          (n, i) =>
            `${n} added p50 ${fmt(addedP50[i] as number)} ms (p99 ${fmt(median(at(c, n).map((m) => m.p99)))} ms), ${Math.round(perSecond[i] as number)}/s, ${fmt(cpu[i] as number)} CPU ms/call`,
        )
        .join('; ')}`,
    );
  }
  return { rows, lines, summary };
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the bench's rounds, one measurement after the other over the processes it started and stops in its finally
async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const dataDirs: string[] = [];
  const dispatcher = benchDispatcher(128);
  let baseline: BaselineCheckout | undefined;
  try {
    const fake = await startProcess([join(ROOT, 'bench', 'fake-llm-process.ts'), 'openai'], {}, true);
    children.push(fake.child);
    const fakeUrl = fake.url; // …/openai/v1
    // BENCH_PROFILE=<dir> writes a CPU profile of the platform process there.
    const profile = process.env.BENCH_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : [];
    baseline = baselineCheckout();
    const baselineDir = baseline?.dir ?? (TRACES_OFF ? ROOT : undefined);
    const startPlatform = async (root: string, flags: string[], env: Record<string, string> = {}) => {
      const dir = await mkdtemp(join(tmpdir(), 'agenthost-bench-'));
      dataDirs.push(dir);
      const started = await startProcess([...flags, ...platformStartArgs(root)], {
        ...benchPlatformEnv(dir, fakeUrl),
        ...env,
      });
      children.push(started.child);
      await publishAgent(started.url, dispatcher);
      return { ...started, dir };
    };
    const startPlatforms = () =>
      Promise.all([
        startPlatform(ROOT, profile),
        baselineDir
          ? startPlatform(
              baselineDir,
              process.env.BENCH_PROFILE_BASELINE
                ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_BASELINE}`]
                : [],
              TRACES_OFF ? { PLATFORM_TRACES: 'off' } : {},
            )
          : undefined,
        // Against traces off, a second traced platform: measured in the same windows, the two traced
        // ones against each other say how far the method itself spreads (a calibration).
        TRACES_OFF ? startPlatform(ROOT, profile) : undefined,
      ]);
    const [portkey, proxy] = await Promise.all([
      startProcess([join(ROOT, 'bench', 'portkey-process.ts')], { NODE_ENV: 'production' }),
      startProcess([join(ROOT, 'bench', 'node-proxy.ts')], { UPSTREAM: fakeUrl }),
    ]);
    children.push(portkey.child, proxy.child);

    const post = (url: string, headers: Record<string, string>, body: string) => async () => {
      const res = await request(url, { method: 'POST', dispatcher, headers, body });
      await res.body.dump();
      return res.statusCode;
    };
    const json = { 'content-type': 'application/json' };
    // The request the platform's OpenAI adapter sends to the model, for the others.
    const modelBody = JSON.stringify({
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: 'Benchmark agent.' },
        { role: 'user', content: 'Echo hello' },
      ],
    });
    const modelHeaders = { ...json, authorization: 'Bearer sk-bench' };
    const direct: Target = {
      name: 'direct',
      send: post(`${fakeUrl}/chat/completions`, modelHeaders, modelBody),
    };
    const agenthost = (name: string, started: { url: string; child: ChildProcess }): Target => ({
      name,
      pid: started.child.pid,
      send: callAgent(started.url, dispatcher),
    });
    const peers: Target[] = [
      {
        name: 'Portkey',
        pid: portkey.child.pid,
        send: post(
          `${portkey.url}/v1/chat/completions`,
          { ...modelHeaders, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': fakeUrl },
          modelBody,
        ),
      },
      {
        name: 'proxy',
        pid: proxy.child.pid,
        send: post(`${proxy.url}/chat/completions`, modelHeaders, modelBody),
      },
    ];
    const names = ['agenthost', ...peers.map((t) => t.name), ...(baselineDir ? [BASELINE_NAME] : [])];

    // Each repeat rotates the order the gateways are measured in. Against a baseline the repeats
    // are a whole number of rotations, so each platform is measured as often in each place: with
    // 3 repeats of 4 gateways, the checkout's platform came first after the direct calls twice as
    // often as the baseline, and a ratio of one commit to itself moved by up to 20%.
    const repeats = baselineDir ? Math.ceil(REPEATS / names.length) * names.length : REPEATS;
    // Against a baseline both platforms are also started afresh for each of several rounds: a
    // process keeps what it was dealt at start (its heap's growth, where its data file's pages
    // fell, which core it shares with the load) for all its repeats, and one commit measured
    // against itself in a single round came out up to 22% apart at concurrency 1.
    const rounds = Number(process.env.BENCH_ROUNDS ?? (baselineDir ? 5 : 1));
    const t0 = performance.now();
    await driveCalls(8, WARMUP, direct.send);
    for (const t of peers) await driveCalls(8, WARMUP, t.send);
    // results[level][target] = one Measure per repeat; rss[target] = one peak per repeat, over all
    // rounds; byRound = the same per round, for the ratios of each round's medians.
    const results = new Map(LEVELS.map((c) => [c, new Map<string, Measure[]>()]));
    const rss = new Map<string, number[]>();
    const byRound: Round[] = [];
    const push = <T>(m: Map<string, T[]>, k: string, v: T) => m.set(k, [...(m.get(k) ?? []), v]);
    for (let round = 0; round < rounds; round++) {
      const [platform, baseline, again] = await startPlatforms();
      const gateways: Target[] = [
        agenthost('agenthost', platform),
        ...peers,
        ...(baseline ? [agenthost(BASELINE_NAME, baseline)] : []),
      ];
      const mine: Round = {
        results: new Map(LEVELS.map((c) => [c, new Map<string, Measure[]>()])),
        rss: new Map<string, number[]>(),
      };
      byRound.push(mine);
      if (baseline && again) {
        // First, while the three have the same history: started together, warmed under one load.
        // Measured after the repeats, the second traced platform (in none of them) used 0.85 of the
        // CPU per call of the first: a process's past load (the repeats at 64 in flight grow its
        // heap) moves its CPU per call by more than what is measured here.
        mine.windows = await cpuInSameWindows(
          { agenthost: platform, [BASELINE_NAME]: baseline, [AGAIN]: again },
          dispatcher,
          { concurrency: WINDOW_LEVEL, windows: WINDOWS, windowMs: WINDOW_MS, warmup: WINDOW_WARMUP },
        );
        process.stdout.write(
          `round ${round + 1}/${rounds}, CPU per call in the same windows at ${WINDOW_LEVEL}: ${[...mine.windows].map(([n, ms]) => `${n} ${ms.map((x) => fmt(x, 3)).join(' ')}`).join('; ')}\n`,
        );
        await stop(again.child);
        children.splice(children.indexOf(again.child), 1);
        await rm(again.dir, { recursive: true, force: true });
        dataDirs.splice(dataDirs.indexOf(again.dir), 1);
      }
      for (const t of [gateways[0] as Target, ...(baseline ? [gateways.at(-1) as Target] : [])])
        await driveCalls(8, WARMUP, t.send);
      for (let r = 0; r < repeats; r++) {
        const order = [...gateways.slice(r % gateways.length), ...gateways.slice(0, r % gateways.length)];
        for (const c of LEVELS) {
          for (const t of [direct, ...order]) {
            const m = await measure(t, c);
            push(results.get(c) as Map<string, Measure[]>, t.name, m);
            push(mine.results.get(c) as Map<string, Measure[]>, t.name, m);
          }
        }
        for (const t of order) {
          const peak = await peakRss(t);
          push(rss, t.name, peak);
          push(mine.rss, t.name, peak);
        }
        process.stdout.write(
          `${rounds > 1 ? `round ${round + 1}/${rounds}, ` : ''}repeat ${r + 1}/${repeats} done after ${fmt((performance.now() - t0) / 1000, 0)} s\n`,
        );
      }
      for (const started of [platform, baseline]) {
        if (!started) continue;
        await stop(started.child);
        children.splice(children.indexOf(started.child), 1);
      }
    }

    const { rows, lines, summary } = levelSummaries(results, names);
    const rssMb = names.map((n) => median(rss.get(n) as number[]));
    const rssRatio = ratio(rss.get('agenthost') as number[], rss.get('Portkey') as number[]);
    const seconds = (performance.now() - t0) / 1000;
    lines.push(
      `RSS at concurrency ${RSS_LEVEL}: ${names.map((n, i) => `${n} ${fmt(rssMb[i] as number, 0)} MB`).join(', ')}`,
    );
    process.stdout.write(`${lines.join('\n')}\nmeasured in ${fmt(seconds, 0)} s\n`);

    if (baselineDir) {
      const table = baselineComparison(byRound, {
        levels: LEVELS,
        rssLevel: RSS_LEVEL,
        baselineName: BASELINE_NAME,
        ...(TRACES_OFF ? { sameWindows: { level: WINDOW_LEVEL, calibration: AGAIN } } : {}),
        intro: `${machineLine()}; run ${new Date().toISOString().slice(0, 10)}; this checkout (${commitOf(ROOT)}) against "${BASELINE_NAME}" (${commitOf(baselineDir)}): ${rounds} rounds, each starting the platforms afresh, of ${repeats} repeats of ${CALLS} calls per gateway and level.`,
      });
      process.stdout.write(`${table}\n`);
      if (TRACES_OFF)
        await writeReport(
          'calls',
          'Traces: the call path with tracing on against off',
          table,
          'calls-traces',
        );
      else
        await writeReport(
          'calls',
          'The call path against an earlier commit, side by side',
          table,
          'calls-baseline',
        );
      return;
    }
    if (!(summary.has(1) && summary.has(16))) {
      if (!process.argv.includes('--no-write'))
        throw new Error('BENCH_LEVELS must include 1 and 16 unless --no-write');
      return;
    }
    const c1 = summary.get(1) as { addedP50: number[] };
    const c16 = summary.get(16) as { cpu: number[]; speedup: number };
    const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
    const table = [
      `${machineLine()}; run ${new Date().toISOString().slice(0, 10)}; \`${baselineDir ? `BENCH_BASELINE=${commitOf(baselineDir)} ` : ''}npm run bench:calls\` (${repeats} repeats of ${CALLS} calls per gateway and level after ${WARMUP} warm-up calls each, ${fmt(seconds, 0)} s)${baselineDir ? `; "${BASELINE_NAME}" is commit ${commitOf(baselineDir)}, this checkout is ${commitOf(ROOT)}` : ''}. Medians over the repeats; the ÷ columns are medians of the per-repeat ratios.`,
      '',
      `| concurrency | direct p50 ms | added p50 ms: ${names.join(' | ')} | calls/s: ${names.join(' | ')} | CPU ms per call: ${names.join(' / ')} | agenthost ÷ Portkey calls/s | agenthost ÷ Portkey CPU/call |`,
      `| ---: | ---: | ${names.map(() => '---:').join(' | ')} | ${names.map(() => '---:').join(' | ')} | ---: | ---: | ---: |`,
      ...rows,
      '',
      `Peak RSS of each gateway's processes at concurrency ${RSS_LEVEL} (${CALLS} calls per repeat): ${names.map((n, i) => `${n} ${fmt(rssMb[i] as number, 0)} MB`).join(', ')}; agenthost ÷ Portkey ${fmt(rssRatio)}.`,
      '',
      'Targets:',
      '',
      `- At concurrency 16, agenthost's throughput at least 1.5× Portkey's: ${verdict(c16.speedup >= 1.5)} (${fmt(c16.speedup)}×).`,
      `- At concurrency 16, agenthost's CPU per call at most 1.0 ms: ${verdict((c16.cpu[0] as number) <= 1)} (${fmt(c16.cpu[0] as number)} ms).`,
      `- At concurrency 1, agenthost's added p50 at most 1.0 ms: ${verdict((c1.addedP50[0] as number) <= 1)} (${fmt(c1.addedP50[0] as number)} ms).`,
      `- At concurrency ${RSS_LEVEL}, agenthost's RSS no higher than Portkey's: ${verdict(rssRatio <= 1)} (${fmt(rssMb[0] as number, 0)} MB against ${fmt(rssMb[1] as number, 0)} MB, ratio ${fmt(rssRatio)}).`,
    ].join('\n');
    await writeReport('calls', 'Call gateway overhead', table);
  } finally {
    await dispatcher.close();
    for (const child of children.reverse()) await stop(child);
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    baseline?.close();
  }
}

await main();
