/**
 * `npm run bench:calls-together`: two platforms loaded at the same time, each with its own calls in
 * flight, and the CPU each uses per call over the same windows of wall time (bench/same-windows.ts).
 * It answers one question, how much more CPU per call one build or setting costs than another:
 * `npm run bench:calls` with BENCH_TRACES_OFF=1 measures tracing's cost the same way for its table;
 * this one compares any two checkouts or settings, and says where the difference went. Each
 * window's ratio spreads by about ±0.03 and the median of 20 windows by about ±0.01 (the same build
 * against itself: 1.009 and 1.001).
 *
 * For each platform it also reads where the CPU went (the main thread's user and system time, V8's
 * worker threads, which run most of the collector's marking and scavenging, from
 * /proc/<pid>/task) and what it wrote (the write calls and bytes of /proc/<pid>/io, which count the
 * store's WAL and any temporary file). docs/performance.md, "Traces: the call path with tracing on
 * against off", has its findings.
 *
 * Defaults: this checkout with traces on against itself with PLATFORM_TRACES=off. Set
 * BENCH_A_DIR / BENCH_B_DIR (checkouts) and BENCH_A_ENV / BENCH_B_ENV (JSON objects of extra
 * environment) to compare others; BENCH_ROUNDS (4: both started afresh each round),
 * BENCH_WINDOWS (5 a round), BENCH_WINDOW_MS (5000), BENCH_CONCURRENCY (16 each), BENCH_WARMUP (the
 * calls each answers before the first window, 20,000: V8 compiles the call path for its first tens
 * of thousands). Prints only.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDispatcher, benchPlatformEnv, callAgent, comparedSides, publishAgent } from './bench-agent.ts';
import { startProcess, stop } from './bench-process.ts';
import { platformStartArgs } from './platform-command.ts';
import { treeCpuMs } from './proc-stats.ts';
import { median } from './report.ts';
import { cpuPerCall, sameWindows } from './same-windows.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SIDES = comparedSides(ROOT);
const ROUNDS = Number(env('BENCH_ROUNDS', '4'));
const WINDOWS = Number(env('BENCH_WINDOWS', '5'));
const WINDOW_MS = Number(env('BENCH_WINDOW_MS', '5000'));
const CONCURRENCY = Number(env('BENCH_CONCURRENCY', '16'));
const WARMUP = Number(env('BENCH_WARMUP', '20000'));
/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

type Side = keyof typeof SIDES;

/** CPU ms by thread group (main, V8Worker, libuv-worker, …) and the process's I/O counters. */
interface Reading {
  cpu: number;
  threads: Map<string, { user: number; system: number }>;
  io: Map<string, number>;
  calls: number;
}

function threadTimes(pid: number): Map<string, { user: number; system: number }> {
  const byGroup = new Map<string, { user: number; system: number }>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const group = task === String(pid) ? 'main' : name;
    const e = byGroup.get(group) ?? { user: 0, system: 0 };
    e.user += Number(fields[11]) * TICK_MS;
    e.system += Number(fields[12]) * TICK_MS;
    byGroup.set(group, e);
  }
  return byGroup;
}

function ioCounters(pid: number): Map<string, number> {
  const lines = readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n');
  return new Map(lines.map((l) => l.split(': ') as [string, string]).map(([k, v]) => [k, Number(v)]));
}

function read(pid: number, calls: number): Reading {
  return { cpu: treeCpuMs(pid), threads: threadTimes(pid), io: ioCounters(pid), calls };
}

/** Per-call sums of what the windows measured, for the closing summary. */
const totals = {
  A: {
    calls: 0,
    threads: new Map<string, { user: number; system: number }>(),
    io: new Map<string, number>(),
  },
  B: {
    calls: 0,
    threads: new Map<string, { user: number; system: number }>(),
    io: new Map<string, number>(),
  },
};

function add(side: Side, before: Reading, after: Reading): void {
  const t = totals[side];
  t.calls += after.calls - before.calls;
  for (const [group, now] of after.threads) {
    const then = before.threads.get(group) ?? { user: 0, system: 0 };
    const sum = t.threads.get(group) ?? { user: 0, system: 0 };
    sum.user += now.user - then.user;
    sum.system += now.system - then.system;
    t.threads.set(group, sum);
  }
  for (const [k, v] of after.io) t.io.set(k, (t.io.get(k) ?? 0) + v - (before.io.get(k) ?? 0));
}

async function main(): Promise<void> {
  const dispatcher = benchDispatcher(4 * CONCURRENCY);
  const fake = await startProcess([join(ROOT, 'bench', 'fake-llm-process.ts'), 'openai'], {}, true);
  const dataDirs: string[] = [];
  const start = async (side: Side) => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-bench-together-'));
    dataDirs.push(dir);
    const started = await startProcess(platformStartArgs(SIDES[side].dir), {
      ...benchPlatformEnv(dir, fake.url),
      ...SIDES[side].env,
    });
    await publishAgent(started.url, dispatcher);
    return started;
  };
  const ratios: number[] = [];
  const running: ChildProcess[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const [a, b] = await Promise.all([start('A'), start('B')]);
      running.push(a.child, b.child);
      const windows = await sameWindows(
        {
          A: { pid: a.child.pid as number, send: callAgent(a.url, dispatcher) },
          B: { pid: b.child.pid as number, send: callAgent(b.url, dispatcher) },
        },
        { concurrency: CONCURRENCY, windows: WINDOWS, windowMs: WINDOW_MS, warmup: WARMUP },
        read,
      );
      const line: string[] = [];
      for (const w of windows) {
        add('A', w.A.before, w.A.after);
        add('B', w.B.before, w.B.after);
        const perCall = (s: Side) => cpuPerCall(s, w[s]);
        ratios.push(perCall('A') / perCall('B'));
        line.push(
          `${(perCall('A') / perCall('B')).toFixed(3)} (${perCall('A').toFixed(3)}/${perCall('B').toFixed(3)} ms)`,
        );
      }
      console.log(`round ${round}/${ROUNDS}: ${line.join(', ')}`);
      await Promise.all([stop(a.child), stop(b.child)]);
      running.length = 0;
    }
    console.log(
      `A ÷ B, CPU per call at ${CONCURRENCY} in flight each: median ${median(ratios).toFixed(3)} over ${ratios.length} windows`,
    );
    for (const side of ['A', 'B'] as const) {
      const t = totals[side];
      const us = (ms: number) => ((ms * 1000) / t.calls).toFixed(0);
      const threads = [...t.threads]
        .filter(([, v]) => v.user + v.system > 0)
        .map(([g, v]) => `${g} ${us(v.user)} user + ${us(v.system)} system`);
      const io = ['syscw', 'wchar', 'syscr', 'rchar'].map(
        (k) => `${k} ${((t.io.get(k) ?? 0) / t.calls).toFixed(1)}`,
      );
      console.log(
        `${side} (${SIDES[side].dir} ${JSON.stringify(SIDES[side].env)}) µs a call: ${threads.join(', ')}`,
      );
      console.log(`${side} per call: ${io.join(', ')}`);
    }
  } finally {
    await Promise.all(running.map((c) => stop(c)));
    await stop(fake.child);
    await dispatcher.close();
    await Promise.all(dataDirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

await main();
