/**
 * `node bench/profile-summary.ts <file.cpuprofile>`: where a CPU profile of the platform (written
 * by `BENCH_PROFILE=<dir> npm run bench:calls -- --no-write`) spends its busy time, by what the
 * time is spent on: SQLite, socket writes, the AI SDK, undici, Node's HTTP server, the project's own
 * code, the garbage collector, other packages and Node's internals. Time spent loading modules
 * (the start-up) is left out of the shares and printed apart. The shares in docs/performance.md
 * ("Call gateway overhead") come from here.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The bucket a sample's own frame belongs to (self time: the frame on top of the stack). */
function bucket(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url.includes('/adapters/local/sqlite-'))
    return 'SQLite (the store adapter, its statements and commits)';
  if (
    ['writev', 'writeBuffer', 'writeUtf8String'].includes(functionName) ||
    url.includes('stream_base_commons')
  )
    return 'socket writes (the system calls of loopback TCP)';
  if (/node_modules\/(ai|@ai-sdk\/[^/]+|zod)\//.test(url)) return 'the AI SDK (ai, @ai-sdk/*, zod)';
  if (url.includes('node_modules/undici/')) return 'undici (the model client)';
  if (url.startsWith('node:_http_') || url === 'node:http') return "Node's HTTP server";
  if (url.includes('/functions/')) return 'agenthost code (functions/, SQLite aside)';
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (url.includes('node_modules/')) return 'other packages';
  return "Node's internals (streams, promises, timers, events, crypto)";
}

const file = process.argv[2];
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile>');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);

/**
 * Whether a sample was taken while modules were being loaded: the platform's start-up (and the
 * first use of a lazily imported module), which the profile holds but no call pays again. It is
 * reported on its own line, so the shares above it are of the calls' time.
 */
function loadingModules(id: number): boolean {
  for (let cur: number | undefined = id; cur !== undefined; cur = parents.get(cur)) {
    if ((nodes.get(cur) as ProfileNode).callFrame.url.startsWith('node:internal/modules/')) return true;
  }
  return false;
}

const totals = new Map<string, number>();
let busy = 0;
let loading = 0;
profile.samples.forEach((id, i) => {
  const frame = (nodes.get(id) as ProfileNode).callFrame;
  if (frame.functionName === '(idle)') return;
  const us = profile.timeDeltas[i] ?? 0;
  if (loadingModules(id)) {
    loading += us;
    return;
  }
  busy += us;
  const b = bucket(frame);
  totals.set(b, (totals.get(b) ?? 0) + us);
});
for (const [b, us] of [...totals].sort((x, y) => y[1] - x[1]))
  process.stdout.write(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${b}\n`);
process.stdout.write(
  `busy ${(busy / 1e6).toFixed(1)} s of samples, besides ${(loading / 1e6).toFixed(1)} s loading modules (start-up)\n`,
);
