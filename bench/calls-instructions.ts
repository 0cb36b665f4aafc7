/**
 * `npm run bench:calls-instructions`: the machine instructions a platform spends per call, counted
 * by Valgrind's callgrind, for two platforms one after the other, and the functions whose counts
 * differ most. It is for finding where a difference between two builds or settings goes, function
 * by function (JIT-compiled JavaScript by its name and file, from V8's perf map), which no timer on this shared machine
 * shows: its ratio is no finer than `npm run bench:calls-together`'s (one comparison counted 1.095,
 * 1.104 and 1.055; under Valgrind a call takes about 40 ms, and what depends on time, such as how
 * many writes share a group commit, moves between runs). An instruction is not a nanosecond (cache
 * misses and system calls are not counted); `bench:calls` stays the figure.
 *
 * Each platform runs under callgrind with V8 on one thread (`--single-threaded`: the collector and
 * the compilers on the main thread, not interleaved with it), first uninstrumented through its
 * start and BENCH_WARMUP calls (30,000: V8 is still optimizing functions for thousands of calls,
 * and after 2,000 the compiler was 14% of the count and most of its spread; after 30,000 under
 * 0.5%), then counted over BENCH_CALLS calls (500), 16 in flight, against the fake model on
 * loopback: about three minutes a platform. BENCH_TOP (25) prints the
 * functions whose counts differ most.
 *
 * Defaults: this checkout with traces on against itself with PLATFORM_TRACES=off, each twice.
 * BENCH_A_DIR / BENCH_B_DIR (checkouts) and BENCH_A_ENV / BENCH_B_ENV (JSON objects of extra
 * environment) compare others; BENCH_ROUNDS (2). Needs `valgrind` (Debian's package). Prints only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import {
  benchPlatformEnv,
  type ComparedSide,
  callAgent,
  comparedSides,
  publishAgent,
} from './bench-agent.ts';
import { startProcess, stop } from './bench-process.ts';
import { driveCalls } from './drive-calls.ts';
import { platformStartArgs } from './platform-command.ts';
import { median } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SIDES = comparedSides(ROOT);
const ROUNDS = Number(env('BENCH_ROUNDS', '2'));
const WARMUP = Number(env('BENCH_WARMUP', '30000'));
const CALLS = Number(env('BENCH_CALLS', '500'));
const TOP = Number(env('BENCH_TOP', '25'));
const CONCURRENCY = 16;
/**
 * V8 on one thread (the collector and the compilers on the main thread, not interleaved with it),
 * and an old generation that starts at 1 GB: no full collection falls in the counted window (one
 * there adds 1 to 2 million instructions a call to one side; 500 calls held one or none). V8 writes
 * where it put each compiled function (/tmp/perf-<pid>.map), which names callgrind's addresses (its
 * collector then reports each object it moves: Heap::OnMoveEvent, about 1% of a call, both sides).
 */
const V8_FLAGS = ['--single-threaded', '--initial-old-space-size=1024', '--perf-basic-prof'];
/** Where callgrind_control finds the running Valgrind (it names its pipes by $HOST, which the platform's env sets). */
const VGDB = ['--vgdb=yes', `--vgdb-prefix=${join(tmpdir(), 'agenthost-vgdb')}`];

const dispatcher = new Agent({ connections: 64 });
const drive = (n: number, send: () => Promise<number>) => driveCalls(CONCURRENCY, n, send);

interface Counted {
  perCall: number;
  dump: string;
  dataDir: string;
  /** The name of the JIT-compiled function at an address, from V8's perf map. */
  jit: (address: number) => string | undefined;
}

/** Counts one platform: its instructions per call, and its per-function counts (callgrind's dump). */
async function count(side: ComparedSide, modelUrl: string): Promise<Counted> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-callgrind-'));
  const platformEnv = { ...benchPlatformEnv(dataDir, modelUrl), ...side.env };
  const { child, url } = await startProcess(
    [...V8_FLAGS, ...platformStartArgs(side.dir)],
    platformEnv,
    false,
    [
      'valgrind',
      '--tool=callgrind',
      ...VGDB,
      '--instr-atstart=no',
      // V8 writes code it then runs: Valgrind must look for it everywhere but in files.
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dataDir, 'callgrind.out')}`,
      `--log-file=${join(dataDir, 'valgrind.log')}`,
    ],
  );
  try {
    await publishAgent(url, dispatcher);
    const send = callAgent(url, dispatcher);
    await drive(WARMUP, send);
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [...VGDB.slice(1), ...args, String(child.pid)], {
        env: { ...process.env, HOST: platformEnv.HOST ?? '' },
        stdio: 'ignore',
      });
    control('--instr=on');
    // The first calls under instrumentation translate the code again: not counted.
    await drive(100, send);
    control('-z');
    await drive(CALLS, send);
    control('-d');
    // The dump is written by the platform's process, as its next instruction runs.
    for (let i = 0; i < 100; i++) {
      const dumps = (await readdir(dataDir)).filter((f) => /^callgrind\.out\.\d+$/.test(f));
      if (dumps.length > 0) {
        const dump = join(dataDir, dumps.sort().at(-1) as string);
        const text = await readFile(dump, 'utf8');
        const total = /^(?:summary|totals): (\d+)/m.exec(text);
        if (total)
          return { perCall: Number(total[1]) / CALLS, dump, dataDir, jit: await jitNames(child.pid) };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('callgrind wrote no dump');
  } finally {
    await stop(child).catch(() => undefined);
  }
}

/**
 * V8's perf map of a process (`start size name` in hex, one line a compiled function; a later line
 * at an address replaces an earlier one, whose code was collected), as a lookup; the file removed.
 */
async function jitNames(pid: number | undefined): Promise<Counted['jit']> {
  const file = join('/tmp', `perf-${pid}.map`);
  const text = await readFile(file, 'utf8').catch(() => '');
  await rm(file, { force: true });
  const byStart = new Map<number, { end: number; name: string }>();
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m)
      byStart.set(Number.parseInt(m[1] as string, 16), {
        end: Number.parseInt(m[1] as string, 16) + Number.parseInt(m[2] as string, 16),
        name: m[3] as string,
      });
  }
  const starts = [...byStart.keys()].sort((x, y) => x - y);
  return (address) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= address) lo = mid;
      else hi = mid - 1;
    }
    const entry = byStart.get(starts[lo] as number);
    return entry && (starts[lo] as number) <= address && address < entry.end ? entry.name : undefined;
  };
}

/**
 * A function's name as the two sides can share it: JIT code's address named from V8's map, without
 * its tier (`*` optimized, `+` Maglev, `^` Sparkplug, `~` interpreted: one side may have compiled it
 * further than the other) or the checkout's directory (the sides may be two checkouts).
 */
function functionName(raw: string, jit: Counted['jit']): string {
  const address = /^\?\?\?:0x([0-9a-f]+)/.exec(raw);
  const named = address ? jit(Number.parseInt(address[1] as string, 16)) : undefined;
  const name = named
    ? `JS ${named
        .replace(/^JS:[*+^~]?'?/, '')
        .replace(/file:\/\/\S*?\/(?=functions\/|bench\/)|\/\S*?\/(?=node_modules\/)/, '')}`
    : raw;
  return name
    .replace(/ \[.*$/, '')
    .replace(/\(.*$/, '')
    .slice(0, 110);
}

/**
 * Instructions per call by function, from a dump (callgrind_annotate's exclusive counts), JIT code's
 * addresses named by `jit`.
 */
function byFunction(dump: string, jit: Counted['jit']): Map<string, number> {
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', dump], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!m || m[2]?.startsWith('PROGRAM TOTALS')) continue;
    const name = functionName(m[2] as string, jit);
    counts.set(name, (counts.get(name) ?? 0) + Number((m[1] as string).replaceAll(',', '')) / CALLS);
  }
  return counts;
}

async function main(): Promise<void> {
  const fake = await startProcess([join(ROOT, 'bench', 'fake-llm-process.ts'), 'openai'], {}, true);
  const per = { A: [] as number[], B: [] as number[] };
  const last: Partial<Record<'A' | 'B', Counted>> = {};
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of ['A', 'B'] as const) {
        const result = await count(SIDES[name], fake.url);
        per[name].push(result.perCall);
        if (last[name]) await rm(last[name].dataDir, { recursive: true, force: true });
        last[name] = result;
        console.log(`round ${round}/${ROUNDS}: ${name} ${Math.round(result.perCall)} instructions a call`);
      }
    }
    const a = median(per.A);
    const b = median(per.B);
    console.log(
      `A ÷ B, instructions per call: ${(a / b).toFixed(3)} (A ${Math.round(a)}, B ${Math.round(b)})`,
    );
    for (const name of ['A', 'B'] as const)
      console.log(
        `${name} (${SIDES[name].dir} ${JSON.stringify(SIDES[name].env)}): ${per[name].map(Math.round).join(', ')}`,
      );
    if (TOP > 0 && last.A && last.B) {
      const fa = byFunction(last.A.dump, last.A.jit);
      const fb = byFunction(last.B.dump, last.B.jit);
      const names = [...new Set([...fa.keys(), ...fb.keys()])];
      names.sort((x, y) => (fb.get(x) ?? 0) - (fa.get(x) ?? 0) - ((fb.get(y) ?? 0) - (fa.get(y) ?? 0)));
      console.log(
        `the ${TOP} functions whose counts differ most (last round, instructions a call: A, B, A − B):`,
      );
      for (const n of names.slice(0, TOP)) {
        const x = fa.get(n) ?? 0;
        const y = fb.get(n) ?? 0;
        console.log(
          `${x.toFixed(0).padStart(9)} ${y.toFixed(0).padStart(9)} ${(x - y >= 0 ? '+' : '') + (x - y).toFixed(0)}  ${n}`,
        );
      }
    }
  } finally {
    for (const r of Object.values(last)) if (r) await rm(r.dataDir, { recursive: true, force: true });
    await stop(fake.child);
    await dispatcher.close();
  }
}

await main();
