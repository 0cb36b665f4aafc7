/**
 * `npm run bench:body-memory`: how much memory request bodies cost the local platform.
 *
 * Starts the platform (`agenthost start`, SQLite) as a subprocess and samples its resident set
 * (VmRSS in /proc/<pid>/status) every 20 ms while it receives, in parallel:
 *  - twelve unauthenticated 99 MB POSTs to the call route (bound: RSS up by under 50 MB);
 *  - twelve authenticated multipart calls carrying the largest file a call takes (bound: 150 MB).
 *  - 1,500 keyless connections each sending 1 MB of a body they never finish (bound: under
 *    100 MB), while an authenticated GET /tasks's p50 is measured against its p50 without them
 *    (bound: within 2x). The clients come from loopback addresses 127.0.1.x and 127.0.0.2.
 * The rise is the peak during a burst minus the RSS just before it (after a warm-up request).
 * The files are image/png, so the prompt agent does not inline them: what is measured is the body's
 * reading and parsing, not what an agent then does with a file.
 *
 * BENCH_BASELINE=<commit> (checked out for the run) or BENCH_BASELINE_DIR=<checkout>
 * (bench/baseline-checkout.ts) runs the same bursts against that commit's platform too (the code
 * before a change: the "before" row, BENCH_BASELINE_LABEL naming it, the commit otherwise), so both
 * figures come from one run on one machine. Results go to docs/performance.md.
 */

import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { MAX_FILE_BYTES } from '../functions/core/calls/call-limits.ts';
import { beforeAndAfter } from './baseline-checkout.ts';
import { startBenchPlatform, stopBenchPlatform } from './bench-platform.ts';
import { checkDescriptors } from './proc-stats.ts';
import { machineLine, writeReport } from './report.ts';

const PARALLEL = 12;
const MB = 1024 * 1024;
/** The largest file a call carries (4.4 MB: what AWS's event budget leaves), less the multipart framing. */
const UPLOAD_BYTES = MAX_FILE_BYTES - 16 * 1024;
const uploadMb = (UPLOAD_BYTES / 1e6).toFixed(1);
const KEY = 'ahk_bench_body_memory_owner_key_0123456789';

const startPlatform = (root: string) =>
  startBenchPlatform(root, {
    key: KEY,
    name: 'body',
    env: {
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      // Nothing listens here: the call fails after its body is parsed, which is what is measured.
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    },
  });
const stopPlatform = stopBenchPlatform;

/** One request; the body (if any) is written whole, and the answer read to its end. */
function send(
  method: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | Buffer[],
  agent?: Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answering = false;
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, ...(agent ? { agent } : {}) },
      (res) => {
        answering = true;
        const chunks: Buffer[] = [];
        const answered = () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', answered);
        // A refusal by header (no key, a declared size over the limit) is answered before the body
        // is read, and the connection is closed a while after (functions/local-platform/lingering-close.ts):
        // the upload still being written then fails, and the answer may end with that error.
        res.on('error', answered);
        res.on('close', answered);
      },
    );
    // Before any answer, a failed request fails the bench; after the answer's head, the upload's
    // error is the close above, and the answer settles the promise.
    req.on('error', (err) => (answering ? undefined : reject(err)));
    for (const part of Array.isArray(body) ? body : body ? [body] : []) req.write(part);
    req.end();
  });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** Runs `burst` while sampling RSS; returns the rise of the peak over the RSS before it, in MB. */
async function riseDuring(pid: number, burst: () => Promise<unknown>): Promise<number> {
  const before = await rssMb(pid);
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMb(pid));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await burst();
  } finally {
    sampling = false;
    await sampler;
  }
  peak = Math.max(peak, await rssMb(pid));
  return peak - before;
}

async function measure(
  root: string,
  kind: 'unauthenticated' | 'authenticated',
): Promise<{ rise: number; statuses: string }> {
  const p = await startPlatform(root);
  try {
    const auth = { authorization: `Bearer ${KEY}` };
    const published = await send(
      'POST',
      p.port,
      '/agents',
      { ...auth, 'content-type': 'application/json' },
      Buffer.from(
        JSON.stringify({ name: 'reader', description: 'Reads files.', supported_providers: ['anthropic'] }),
      ),
    );
    if (published.status !== 201) throw new Error(`publish failed: ${published.text}`);
    const route = '/local/reader/v1/run';

    // Warm-up: one small call of each kind, so lazily loaded code is not counted as body memory.
    await send('POST', p.port, route, { 'content-type': 'application/json' }, Buffer.from('{}'));
    const boundary = 'benchbodymemoryboundary';
    const multipart = (file: Buffer) => [
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n` +
          'Content-Type: image/png\r\n\r\n',
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ];
    const mpHeaders = (file: Buffer) => ({
      ...auth,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(multipart(file).reduce((n, b) => n + b.length, 0)),
    });
    const small = Buffer.alloc(1024, 1);
    await send('POST', p.port, route, mpHeaders(small), multipart(small));

    const statuses = new Set<string>();
    const pid = p.child.pid as number;
    if (kind === 'unauthenticated') {
      const big = Buffer.alloc(99 * MB, 0x20);
      const rise = await riseDuring(pid, () =>
        Promise.all(
          Array.from({ length: PARALLEL }, () =>
            send(
              'POST',
              p.port,
              route,
              { 'content-type': 'application/json', 'content-length': String(big.length) },
              big,
            ).then((r) => statuses.add(`${r.status} ${errorCode(r.text)}`)),
          ),
        ),
      );
      return { rise, statuses: [...statuses].sort().join(', ') };
    }
    const file = Buffer.alloc(UPLOAD_BYTES, 7);
    const rise = await riseDuring(pid, () =>
      Promise.all(
        Array.from({ length: PARALLEL }, () =>
          send('POST', p.port, route, mpHeaders(file), multipart(file)).then((r) =>
            statuses.add(`${r.status} ${errorCode(r.text)}`),
          ),
        ),
      ),
    );
    return { rise, statuses: [...statuses].sort().join(', ') };
  } finally {
    await stopPlatform(p);
  }
}

/** Connections the keyless burst opens, each sending 1 MB of a larger body and never finishing. */
const KEYLESS_CONNECTIONS = 1_500;
/** Client addresses they come from (loopback 127.0.1.x): each stays under the per-address cap, so the bodies' bounds are what is measured, not the cap's refusals. */
const KEYLESS_ADDRESSES = 10;
const TASKS_SAMPLES = 200;

/** The p50 of TASKS_SAMPLES GET /tasks, one at a time, each on a new connection (the server closes idle ones). */
async function tasksP50(port: number, agent: Agent): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < TASKS_SAMPLES; i++) {
    const started = performance.now();
    const r = await send('GET', port, '/tasks', { authorization: `Bearer ${KEY}` }, undefined, agent);
    if (r.status !== 200) throw new Error(`GET /tasks: ${r.status} ${r.text}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

/**
 * Opens KEYLESS_CONNECTIONS raw connections to keyless routes (/health with a declared 1 MiB body,
 * /health chunked, a webhook with a wrong secret), writes 1 MB of body on each and never finishes;
 * resolves once every connection has written it or been closed. Returns the sockets and the
 * statuses seen.
 */
async function keylessLoad(
  port: number,
): Promise<{ sockets: Socket[]; statuses: Map<string, number>; settled: Promise<unknown> }> {
  // Within the default body limit (1 MiB) and 1 KiB short of it: a body the server buffered as it
  // came would be held until Node's 300 s request timeout.
  const mb = Buffer.alloc(MB - 1024, 0x20);
  const chunked = Buffer.concat([Buffer.from(`${MB.toString(16)}\r\n`), mb]);
  const statuses = new Map<string, number>();
  const targets = [
    'GET /health HTTP/1.1\r\nHost: bench\r\nContent-Length: 1048576\r\n\r\n',
    'GET /health HTTP/1.1\r\nHost: bench\r\nTransfer-Encoding: chunked\r\n\r\n',
    'POST /webhooks/00000000-0000-4000-8000-000000000000/not-the-secret HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n',
  ];
  const settles: Promise<void>[] = [];
  const sockets = await Promise.all(
    Array.from({ length: KEYLESS_CONNECTIONS }, async (_, i) => {
      const socket = connect({
        host: '127.0.0.1',
        port,
        localAddress: `127.0.1.${1 + (i % KEYLESS_ADDRESSES)}`,
      });
      socket.on('error', () => undefined);
      let head = '';
      // Settled once the server has answered it or closed it.
      settles.push(
        new Promise<void>((settle) => {
          socket.once('close', () => settle());
          socket.on('data', (d: Buffer) => {
            if (head.length >= 12) return;
            head += d.toString('latin1');
            if (head.length >= 12) {
              const status = head.slice(9, 12);
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              settle();
            }
          });
        }),
      );
      await new Promise<void>((resolve) => {
        socket.once('connect', () => resolve());
        socket.once('close', () => resolve());
      });
      const kind = i % targets.length;
      socket.write(targets[kind] as string);
      await new Promise<void>((resolve) => {
        socket.write(kind === 1 ? chunked : mb, () => resolve());
        socket.once('close', () => resolve());
      });
      return socket;
    }),
  );
  return { sockets, statuses, settled: Promise.all(settles) };
}

/** The keyless burst on a fresh platform: the RSS rise, and GET /tasks's p50 before it and during it. */
async function measureKeyless(
  root: string,
): Promise<{ rise: number; idleP50: number; loadedP50: number; statuses: string }> {
  const p = await startPlatform(root);
  const agent = new Agent({ keepAlive: false, localAddress: '127.0.0.2' });
  try {
    await tasksP50(p.port, agent); // warm-up
    const idleP50 = await tasksP50(p.port, agent);
    let loadedP50 = 0;
    let statuses = new Map<string, number>();
    const pid = p.child.pid as number;
    const rise = await riseDuring(pid, async () => {
      const load = await keylessLoad(p.port);
      statuses = load.statuses;
      loadedP50 = await tasksP50(p.port, agent);
      // Held until the server has dealt with every one (or for a minute, as before the fix, when it
      // never does), so the peak counts them all.
      await Promise.race([load.settled, new Promise((r) => setTimeout(r, 60_000))]);
      for (const s of load.sockets) s.destroy();
    });
    const shown = [...statuses]
      .sort()
      .map(([s, n]) => `${n}× ${s}`)
      .join(', ');
    const unanswered = KEYLESS_CONNECTIONS - [...statuses.values()].reduce((a, b) => a + b, 0);
    return {
      rise,
      idleP50,
      loadedP50,
      statuses: [shown, unanswered ? `${unanswered}× no answer` : ''].filter(Boolean).join(', '),
    };
  } finally {
    agent.destroy();
    await stopPlatform(p);
  }
}

/** The error code of an answer, or '' for a success. */
function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
  } catch {
    return '';
  }
}

/** Each burst on a fresh platform: a process seldom gives freed memory back to the system at once. */
async function row(label: string, root: string): Promise<[string, string]> {
  const progress = (what: string) => process.stderr.write(`${label}: ${what}\n`);
  progress('unauthenticated 99 MB POSTs');
  const u = await measure(root, 'unauthenticated');
  progress(`authenticated ${uploadMb} MB uploads`);
  const a = await measure(root, 'authenticated');
  progress(`${KEYLESS_CONNECTIONS} keyless connections`);
  const k = await measureKeyless(root);
  process.stdout.write(`${label}: ${JSON.stringify({ unauthenticated: u, authenticated: a, keyless: k })}\n`);
  const fmt = (n: number) => `${Math.round(n)} MB`;
  const ratio = k.loadedP50 / k.idleP50;
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  return [
    `| ${label} | ${fmt(u.rise)} (${u.statuses}) | ${fmt(a.rise)} (${a.statuses}) |`,
    `| ${label} | ${fmt(k.rise)} (${met(k.rise <= 100)}; ${k.statuses}) | ${k.idleP50.toFixed(2)} ms | ${k.loadedP50.toFixed(2)} ms | ${ratio.toFixed(2)}× (${met(ratio <= 2)}) |`,
  ];
}

async function main(): Promise<void> {
  // 1,500 client sockets and as many on the server: each needs a descriptor.
  await checkDescriptors(KEYLESS_CONNECTIONS + 200);
  const { rows, commits } = await beforeAndAfter(row);
  const table = [
    `${machineLine()}.${commits} Rise of the platform process's RSS (peak during the burst minus the RSS before it).`,
    '',
    `| Code | ${PARALLEL} × unauthenticated 99 MB POST (bound < 50 MB) | ${PARALLEL} × authenticated ${uploadMb} MB file upload (bound < 150 MB) |`,
    '|---|---|---|',
    ...rows.map((r) => r[0]),
    '',
    `Keyless connections: ${KEYLESS_CONNECTIONS} raw connections from ${KEYLESS_ADDRESSES} loopback addresses (under the per-address cap, so the bodies' own bounds are measured) to \`/health\` (1 MiB declared), \`/health\` chunked and a webhook with a wrong secret, each writing 1 MB of body and never finishing, held while ${TASKS_SAMPLES} authenticated \`GET /tasks\` run one at a time from another address. The p50 before and under the load are measured in the same run on the same platform; on a shared 2-core machine the ratio, not the milliseconds, is the figure. Targets: RSS rise ≤ 100 MB, p50 within 2×.`,
    '',
    '| Code | RSS rise (answers) | GET /tasks p50 idle | p50 under load | ratio |',
    '|---|---|---|---|---|',
    ...rows.map((r) => r[1]),
  ].join('\n');
  await writeReport('body-memory', 'Request body memory', table);
}

await main();
