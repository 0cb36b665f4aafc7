/**
 * `npm run bench:sandbox`: what a sandboxed run costs on the local host.
 *
 * The local platform runs in this process (SQLite, bubblewrap), with a tool agent whose command is
 * `cat` (it echoes the call's JSON input), twice side by side in one run:
 *  - `spawner`: sandboxes forked by the spawner process (functions/adapters/local/bwrap/spawner.ts,
 *    the default) with the short inner chain;
 *  - `in-process`: the platform forks bwrap itself with the former chain (prlimit, bash), as
 *    before the spawner (BwrapSandbox's `spawner: 'in-process'`).
 * Once warm, this process gets a ballast of touched memory that brings it to BENCH_PLATFORM_MB
 * (default 300) resident, as large as the platform in service (docs/sandbox.md): fork() copies the
 * caller's page tables, so what a spawn costs depends on that size.
 *
 * Per repeat, for each mode (the order rotated): the call through the API (`POST /bench/cat/v1/run`)
 * against a bare child_process.spawn of `cat` from this process with the same input, both
 * sequentially and at concurrency 4 (p50 of each, the ratio API/bare); the table has the medians
 * over the repeats. Then, per mode, while 4 sandboxed runs start every second: the event loop's
 * delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution, in this process, which is the
 * platform's) and /health's latency seen from another process (bench/health-probe-process.ts);
 * how long one child_process.spawn call holds this process's loop at its size; and, as the floor
 * under any bubblewrap sandbox, bwrap alone with the same namespaces running `cat`. Results go to
 * docs/performance.md.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BwrapSandbox } from '../functions/adapters/local/bwrap/sandboxes.ts';
import { packDirectory } from '../functions/cli/pack.ts';
import { createAccount } from '../functions/core/accounts/account.ts';
import { startTestPlatform, type TestPlatform } from '../test/helpers/platform.ts';
import { treeRssMb } from './proc-stats.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 40);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 8);
const RUNS_PER_SECOND = 4;
/** This process's resident size once the ballast is in, MB. */
const PLATFORM_MB = Number(process.env.BENCH_PLATFORM_MB ?? 300);
const CONCURRENCY = 4;
const HEALTH_INTERVAL_MS = 5;
const PROBE_ENTRY = fileURLToPath(new URL('./health-probe-process.ts', import.meta.url));
const INPUT = JSON.stringify({ text: 'hello', n: 42 });

type Mode = 'spawner' | 'in-process';
const MODES: Mode[] = ['spawner', 'in-process'];

interface Platform {
  mode: Mode;
  p: TestPlatform;
  sandbox: BwrapSandbox;
  key: string;
  runsDir: string;
}

async function startPlatform(mode: Mode): Promise<Platform> {
  const runsDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-sandbox-'));
  const sandbox = new BwrapSandbox({ runsDir, spawner: mode === 'spawner' ? 'process' : 'in-process' });
  const p = await startTestPlatform({ PLATFORM_LOG_LEVEL: 'silent' }, 'sqlite', { sandbox });
  const o = await createAccount(p.deps, { org: 'bench', tier: 'enterprise' });
  const agent = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
    key: o.api_key,
    body: {
      name: 'cat',
      type: 'tool',
      description: 'Echoes its input.',
      supported_providers: ['any'],
      runtime: { command: 'cat' },
      required_secrets: [],
    },
  });
  if (agent.status !== 201) throw new Error(`publish failed: ${agent.text}`);
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bench-cat-'));
  await writeFile(join(dir, 'README.md'), 'Echoes its input with cat.\n');
  const bundle = (await packDirectory(dir)).data;
  await rm(dir, { recursive: true, force: true });
  const up = await p.request('POST', `/agents/${agent.body.id}/upload`, {
    key: o.api_key,
    rawBody: bundle,
    headers: { 'content-type': 'application/gzip' },
  });
  if (up.status !== 200) throw new Error(`upload failed: ${up.text}`);
  return { mode, p, sandbox, key: o.api_key, runsDir };
}

/** One call through the API; its latency in ms. */
async function apiCall(platform: Platform): Promise<number> {
  const started = performance.now();
  const res = await platform.p.request<{ data?: unknown }>('POST', '/bench/cat/v1/run', {
    key: platform.key,
    body: JSON.parse(INPUT),
  });
  if (res.status !== 200) throw new Error(`call failed: ${res.status} ${res.text}`);
  return performance.now() - started;
}

/** `file args` spawned from this process with the bench's input, read to its end; latency in ms. */
function timedSpawn(file: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', () => (out === INPUT ? resolve(performance.now() - started) : reject(new Error(out))));
    child.stdin.end(INPUT);
  });
}

/** `cat` spawned from this process with the same input; latency in ms. */
function bareSpawn(): Promise<number> {
  return timedSpawn('cat', []);
}

/**
 * The floor under any bubblewrap sandbox: bwrap with the same namespaces (user, mount, pid, ipc,
 * uts, cgroup, network) and only /usr bound, running `cat` with the same input, spawned from this
 * process; latency in ms.
 */
function bareBwrap(): Promise<number> {
  const args = ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session'];
  args.push('--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib');
  args.push('--symlink', 'usr/lib64', '/lib64', '--proc', '/proc', '--dev', '/dev', 'cat');
  return timedSpawn('bwrap', args);
}

/** `count` calls of `one`, `concurrency` at a time; the p50 of their latencies. */
async function p50(one: () => Promise<number>, count: number, concurrency: number): Promise<number> {
  const times: number[] = [];
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) times.push(await one());
    }),
  );
  return quantile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

interface LoopFigures {
  /** monitorEventLoopDelay in this (the platform's) process, ms. */
  p99: number;
  max: number;
  /** /health answered to the probe process, ms. */
  health: { p50: number; p99: number; max: number };
}

/**
 * While RUNS_PER_SECOND calls start every second for LOAD_SECONDS (none for `platform` undefined,
 * the idle baseline, on `url`): the event loop's delay in this process, and /health's latency as a
 * separate process sees it every HEALTH_INTERVAL_MS (bench/health-probe-process.ts).
 */
async function loopDelay(platform: Platform | undefined, url: string): Promise<LoopFigures> {
  const probe = spawn(
    process.execPath,
    [PROBE_ENTRY, url, String(LOAD_SECONDS * 1000), String(HEALTH_INTERVAL_MS)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: probe.stdout })[Symbol.asyncIterator]();
  if ((await lines.next()).value !== 'ready') throw new Error('the health probe did not start');
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const calls: Promise<number>[] = [];
  histogram.enable();
  probe.stdin.write('go\n');
  for (let i = 0; i < LOAD_SECONDS * RUNS_PER_SECOND; i++) {
    if (platform) calls.push(apiCall(platform));
    await new Promise((r) => setTimeout(r, 1000 / RUNS_PER_SECOND));
  }
  await Promise.all(calls);
  histogram.disable();
  const health = JSON.parse((await lines.next()).value as string) as LoopFigures['health'];
  probe.stdin.end();
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, health };
}

/** How long one child_process.spawn call holds this process's event loop (median of 30), ms. */
function spawnStall(): number {
  const stalls: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    const child = spawn('true', [], { stdio: 'ignore' });
    stalls.push(performance.now() - started);
    child.on('error', () => {});
  }
  return median(stalls);
}

async function main(): Promise<void> {
  const platforms = [await startPlatform('spawner'), await startPlatform('in-process')];
  const byMode = (mode: Mode) => platforms.find((p) => p.mode === mode)!;
  let ballastMb = 0;
  let ballast = Buffer.alloc(0);
  const results: Record<Mode, { seq: number[]; conc: number[]; bareSeq: number[]; bareConc: number[] }> = {
    spawner: { seq: [], conc: [], bareSeq: [], bareConc: [] },
    'in-process': { seq: [], conc: [], bareSeq: [], bareConc: [] },
  };
  try {
    // Warm-up: the bundle extracted once, the spawner started, the JIT warm.
    for (const platform of platforms) for (let i = 0; i < 5; i++) await apiCall(platform);
    for (let i = 0; i < 5; i++) await bareSpawn();
    // Touched, so that it is resident: the page tables fork() copies. Sized once warm.
    ballastMb = Math.max(0, Math.round(PLATFORM_MB - process.memoryUsage().rss / 2 ** 20));
    ballast = Buffer.alloc(ballastMb * 2 ** 20, 1);
    for (let r = 0; r < REPEATS; r++) {
      for (const mode of r % 2 ? [...MODES].reverse() : MODES) {
        const platform = byMode(mode);
        const out = results[mode];
        out.seq.push(await p50(() => apiCall(platform), CALLS, 1));
        out.bareSeq.push(await p50(bareSpawn, CALLS, 1));
        out.conc.push(await p50(() => apiCall(platform), CALLS, CONCURRENCY));
        out.bareConc.push(await p50(bareSpawn, CALLS, CONCURRENCY));
        process.stdout.write(
          `repeat ${r + 1} ${mode}: sequential ${out.seq.at(-1)!.toFixed(1)} ms vs bare ${out.bareSeq.at(-1)!.toFixed(1)} ms; concurrency ${CONCURRENCY} ${out.conc.at(-1)!.toFixed(1)} ms vs bare ${out.bareConc.at(-1)!.toFixed(1)} ms\n`,
        );
      }
    }
    const floor: number[] = [];
    const floorBare: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      floor.push(await p50(bareBwrap, CALLS, 1));
      floorBare.push(await p50(bareSpawn, CALLS, 1));
    }
    const idle = await loopDelay(undefined, byMode('spawner').p.url);
    const loaded: Record<Mode, LoopFigures> = {
      spawner: await loopDelay(byMode('spawner'), byMode('spawner').p.url),
      'in-process': await loopDelay(byMode('in-process'), byMode('in-process').p.url),
    };
    const stall = spawnStall();
    const platformRss = process.memoryUsage().rss / 2 ** 20;
    const spawnerPid = byMode('spawner').sandbox.spawner?.pid;
    const spawnerRss = spawnerPid ? treeRssMb(spawnerPid) : 0;

    const ratio = (api: number[], bare: number[]) => median(api.map((a, i) => a / bare[i]!));
    const f = (n: number) => n.toFixed(1);
    const rows = MODES.map((mode) => {
      const o = results[mode];
      return `| ${mode === 'spawner' ? 'spawner process (default)' : 'in-process spawn (before)'} | ${f(median(o.seq))} | ${f(median(o.bareSeq))} | **${ratio(o.seq, o.bareSeq).toFixed(2)}×** | ${f(median(o.conc))} | ${f(median(o.bareConc))} | **${ratio(o.conc, o.bareConc).toFixed(2)}×** | ${f(loaded[mode].p99)} | ${f(loaded[mode].max)} | ${f(loaded[mode].health.p50)} / ${f(loaded[mode].health.p99)} / ${f(loaded[mode].health.max)} |`;
    });
    const s = results.spawner;
    const seqRatio = ratio(s.seq, s.bareSeq);
    const concRatio = ratio(s.conc, s.bareConc);
    const met = (ok: boolean) => (ok ? 'met' : 'not met');
    const table = [
      `${machineLine()}; this process (the platform) at ${Math.round(platformRss)} MB RSS (${ballastMb} MB of it ballast), the spawner at ${Math.round(spawnerRss)} MB; ${CALLS} calls per measure, median of ${REPEATS} repeats; both modes in one run, ${new Date().toISOString().slice(0, 10)}. \`npm run bench:sandbox\`.`,
      '',
      `| sandbox forked by | API p50 ms (sequential) | bare spawn p50 ms | API / bare | API p50 ms (concurrency ${CONCURRENCY}) | bare spawn p50 ms | API / bare | event-loop delay p99 ms at ${RUNS_PER_SECOND} runs/s | max ms | /health p50 / p99 / max ms meanwhile |`,
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      `| bwrap alone (the same namespaces, /usr only, \`cat\`), no platform | ${f(median(floor))} | ${f(median(floorBare))} | ${ratio(floor, floorBare).toFixed(2)}× | | | | | | |`,
      '',
      `Idle, the same loop's delay p99 is ${f(idle.p99)} ms (max ${f(idle.max)} ms) and /health answers in ${f(idle.health.p50)} / ${f(idle.health.p99)} / ${f(idle.health.max)} ms (p50 / p99 / max; a GET every ${HEALTH_INTERVAL_MS} ms on a fixed schedule from another process, as tenants would send them, so that every request arriving during a stall waits for it: the histogram counts a stall once, however long). One child_process.spawn call holds this process's event loop ${f(stall)} ms (median of 30) at ${Math.round(platformRss)} MB: the stall the spawner moves out of the platform. The event-loop figures are this whole process's: the platform, and the bench's own HTTP client.`,
      '',
      `- Target: a trivial tool call through the API at most 2× a bare spawn at p50: sequential ${seqRatio.toFixed(2)}× (${met(seqRatio <= 2)}), concurrency ${CONCURRENCY} ${concRatio.toFixed(2)}× (${met(concRatio <= 2)}).`,
      `- Target: event-loop delay p99 under 5 ms while ${RUNS_PER_SECOND} sandboxed runs start per second: ${f(loaded.spawner.p99)} ms (${met(loaded.spawner.p99 < 5)}; in-process spawn: ${f(loaded['in-process'].p99)} ms); /health p99 meanwhile ${f(loaded.spawner.health.p99)} ms against ${f(loaded['in-process'].health.p99)} ms with in-process spawn.`,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    await writeReport(
      'sandbox',
      'Sandboxed runs: a tool call against a bare spawn, and the event loop',
      table,
    );
  } finally {
    for (const platform of platforms) {
      await platform.p.close();
      platform.sandbox.spawner?.stop();
      await rm(platform.runsDir, { recursive: true, force: true });
    }
    ballast.fill(0);
  }
}

await main();
