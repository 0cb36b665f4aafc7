/**
 * `npm run bench:unread-answers`: what answers their clients never read cost the local platform
 * (docs/http.md, "Answers a client does not read").
 *
 * Starts the platform (`agenthost start`, SQLite) as a subprocess, gives its owner a page of tasks
 * of about 5.9 MB (GET /tasks), and measures, on the same platform in one run:
 *  - idle: its resident set (VmRSS) and another client's p50 of a small authenticated request
 *    (`GET /health`, from 127.0.0.3);
 *  - loaded: 500 connections asking for the large page, 250 from 127.0.0.1 and 250 from 127.0.0.2
 *    (under the per-address connection cap), each reading the answer's first bytes and then
 *    nothing, held while the other client's p50 is measured again; the RSS is sampled every 20 ms
 *    throughout and its peak taken.
 * Targets: RSS peak within 200 MB of idle, the other client's p50 within 2x of idle.
 *
 * BENCH_BASELINE=<commit> (checked out for the run) or BENCH_BASELINE_DIR=<checkout>
 * (bench/baseline-checkout.ts) runs the same against that commit's platform too (the code before a
 * change: the "before" row, BENCH_BASELINE_LABEL naming it, the commit otherwise), so both rows
 * come from one run on one machine. Results go to docs/performance.md.
 */

import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { beforeAndAfter } from './baseline-checkout.ts';
import { startBenchPlatform, stopBenchPlatform } from './bench-platform.ts';
import { checkDescriptors } from './proc-stats.ts';
import { machineLine, quantile, writeReport } from './report.ts';

const KEY = 'ahk_bench_unread_answers_owner_key_0123456789';
/** The page: 40 descriptions of 50,000 `€` (3 bytes each), about 5.9 MB of JSON. */
const TASKS = 40;
const DESCRIPTION = '€'.repeat(50_000);
const UNREAD = 500;
const ADDRESSES = ['127.0.0.1', '127.0.0.2'];
const OTHER_CLIENT = '127.0.0.3';
const SAMPLES = 200;
const RSS_BOUND_MB = 200;

const startPlatform = (root: string) => startBenchPlatform(root, { key: KEY, name: 'unread' });
const stopPlatform = stopBenchPlatform;

/** One request, its answer read whole. */
function send(
  method: string,
  port: number,
  path: string,
  body?: unknown,
  agent?: Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (payload) headers['content-type'] = 'application/json';
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, ...(agent ? { agent } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** The p50 of SAMPLES health checks from another client, one at a time (the measure). */
async function otherClientP50(port: number, agent: Agent): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const r = await send('GET', port, '/health', undefined, agent);
    if (r.status !== 200) throw new Error(`GET /health: ${r.status} ${r.text.slice(0, 200)}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return quantile(times, 0.5);
}

/** Opens the unread connections; resolves once each has its answer's head (or was closed). */
async function unreadLoad(port: number): Promise<{ sockets: Socket[]; statuses: Map<string, number> }> {
  const statuses = new Map<string, number>();
  const sockets: Socket[] = [];
  await Promise.all(
    Array.from({ length: UNREAD }, (_, i) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress: ADDRESSES[i % ADDRESSES.length] });
      sockets.push(socket);
      socket.on('error', (err: NodeJS.ErrnoException) => {
        const what = `error ${err.code ?? err.message}`;
        statuses.set(what, (statuses.get(what) ?? 0) + 1);
      });
      socket.write(`GET /tasks HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
      return new Promise<void>((resolve) => {
        socket.once('data', (d: Buffer) => {
          socket.pause();
          const status = d.toString('latin1').slice(9, 12);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          resolve();
        });
        socket.once('close', () => resolve());
      });
    }),
  );
  return { sockets, statuses };
}

interface Row {
  idleRss: number;
  peakRss: number;
  idleP50: number;
  loadedP50: number;
  statuses: string;
}

async function measure(root: string): Promise<Row> {
  const p = await startPlatform(root);
  const agent = new Agent({ keepAlive: false, localAddress: OTHER_CLIENT });
  try {
    for (let i = 0; i < TASKS; i++) {
      const made = await send('POST', p.port, '/tasks', { title: `t${i}`, description: DESCRIPTION });
      if (made.status !== 201) throw new Error(`POST /tasks: ${made.status} ${made.text.slice(0, 200)}`);
    }
    const page = await send('GET', p.port, '/tasks');
    process.stderr.write(`  page: ${(Buffer.byteLength(page.text) / 1e6).toFixed(2)} MB\n`);
    await otherClientP50(p.port, agent); // warm-up
    const pid = p.child.pid as number;
    const idleP50 = await otherClientP50(p.port, agent);
    const idleRss = await rssMb(pid);
    let peakRss = idleRss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, await rssMb(pid).catch(() => 0));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let statuses = new Map<string, number>();
    let loadedP50 = 0;
    try {
      const load = await unreadLoad(p.port);
      statuses = load.statuses;
      loadedP50 = await otherClientP50(p.port, agent);
      peakRss = Math.max(peakRss, await rssMb(pid));
      for (const s of load.sockets) s.destroy();
    } finally {
      sampling = false;
      await sampler;
    }
    const shown = [...statuses]
      .sort()
      .map(([s, n]) => `${n}× ${s}`)
      .join(', ');
    const answered = [...statuses.values()].reduce((a, b) => a + b, 0);
    return {
      idleRss,
      peakRss,
      idleP50,
      loadedP50,
      statuses: [shown, answered < UNREAD ? `${UNREAD - answered}× closed unanswered` : '']
        .filter(Boolean)
        .join(', '),
    };
  } finally {
    agent.destroy();
    await stopPlatform(p);
  }
}

async function row(label: string, root: string): Promise<string> {
  process.stderr.write(`${label}: ${UNREAD} unread pages\n`);
  const r = await measure(root);
  process.stdout.write(`${label}: ${JSON.stringify(r)}\n`);
  const rise = r.peakRss - r.idleRss;
  const ratio = r.loadedP50 / r.idleP50;
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  return `| ${label} | ${Math.round(r.idleRss)} MB | ${Math.round(r.peakRss)} MB | ${Math.round(rise)} MB (${met(rise <= RSS_BOUND_MB)}) | ${r.idleP50.toFixed(2)} ms | ${r.loadedP50.toFixed(2)} ms | ${ratio.toFixed(2)}× (${met(ratio <= 2)}) | ${r.statuses} |`;
}

async function main(): Promise<void> {
  await checkDescriptors(UNREAD * 2 + 200);
  const { rows, commits } = await beforeAndAfter(row);
  const table = [
    `${machineLine()}.${commits} ${UNREAD} connections from ${ADDRESSES.join(' and ')} ask for a page of tasks of about 5.9 MB and read its first bytes only, held while ${SAMPLES} \`GET /health\` of another client (${OTHER_CLIENT}) run one at a time; its p50 without them is measured just before, on the same platform. The platform's RSS is sampled every 20 ms; the rise is its peak minus the idle RSS. Targets: rise ≤ ${RSS_BOUND_MB} MB, p50 within 2×.`,
    '',
    '| Code | RSS idle | RSS peak | rise | other client p50 idle | p50 with the unread answers | ratio | the 500 answers |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  await writeReport('unread-answers', 'Answers a client does not read', table);
}

await main();
