/**
 * `npm run bench:body-memory`: how much memory request bodies cost the local platform.
 *
 * Starts the platform (`agenthost start`, SQLite) as a subprocess and samples its resident set
 * (VmRSS in /proc/<pid>/status) every 20 ms while it receives, in parallel:
 *  - twelve unauthenticated 99 MB POSTs to the call route (bound: RSS up by under 50 MB);
 *  - twelve authenticated multipart calls carrying one 25 MB file each (bound: under 150 MB).
 * The rise is the peak during a burst minus the RSS just before it (after a warm-up request).
 * The files are image/png, so the prompt agent does not inline them: what is measured is the body's
 * reading and parsing, not what an agent then does with a file.
 *
 * BENCH_BASELINE_DIR=<checkout> runs the same bursts against another checkout's platform too (the
 * code before a change, e.g. `git archive <commit> | tar -x -C <dir>` with node_modules linked), so
 * both figures come from one run on one machine. Results go to docs/performance.md.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformStartArgs } from './platform-command.ts';
import { machineLine, writeReport } from './report.ts';

const PARALLEL = 12;
const MB = 1024 * 1024;
const KEY = 'ahk_bench_body_memory_owner_key_0123456789';
const HERE = fileURLToPath(new URL('..', import.meta.url));

interface Platform {
  child: ChildProcess;
  port: number;
  dataDir: string;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

async function startPlatform(root: string): Promise<Platform> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-body-'));
  const child = spawn(process.execPath, platformStartArgs(root), {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: KEY,
      PLATFORM_LOG_LEVEL: 'silent',
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      // Nothing listens here: the call fails after its body is parsed, which is what is measured.
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    },
  });
  for (let i = 0; i < 300; i++) {
    const up = await send('GET', port, '/health', {}).catch(() => undefined);
    if (up?.status === 200) return { child, port, dataDir };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`the platform in ${root} did not start`);
}

async function stopPlatform(p: Platform): Promise<void> {
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
  await rm(p.dataDir, { recursive: true, force: true });
}

/** One request; the body (if any) is written whole, and the answer read to its end. */
function send(
  method: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | Buffer[],
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answering = false;
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      answering = true;
      const chunks: Buffer[] = [];
      const answered = () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', answered);
      // A refusal by header (no key, a declared size over the limit) is answered before the body
      // is read, and the connection is closed a while after (functions/platform/lingering-close.ts):
      // the upload still being written then fails, and the answer may end with that error.
      res.on('error', answered);
      res.on('close', answered);
    });
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
    const file = Buffer.alloc(25 * MB - 1024, 7);
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

/** The error code of an answer, or '' for a success. */
function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
  } catch {
    return '';
  }
}

/** Each burst on a fresh platform: a process seldom gives freed memory back to the system at once. */
async function row(label: string, root: string): Promise<string> {
  const u = await measure(root, 'unauthenticated');
  const a = await measure(root, 'authenticated');
  process.stdout.write(`${label}: ${JSON.stringify({ unauthenticated: u, authenticated: a })}\n`);
  const fmt = (n: number) => `${Math.round(n)} MB`;
  return `| ${label} | ${fmt(u.rise)} (${u.statuses}) | ${fmt(a.rise)} (${a.statuses}) |`;
}

async function main(): Promise<void> {
  const baselineDir = process.env.BENCH_BASELINE_DIR;
  const rows: string[] = [];
  if (baselineDir)
    rows.push(await row(`before (${process.env.BENCH_BASELINE_LABEL ?? baselineDir})`, baselineDir));
  rows.push(await row('after (this checkout)', HERE));
  const table = [
    `${machineLine()}. Rise of the platform process's RSS (peak during the burst minus the RSS before it).`,
    '',
    `| Code | ${PARALLEL} × unauthenticated 99 MB POST (bound < 50 MB) | ${PARALLEL} × authenticated 25 MB file upload (bound < 150 MB) |`,
    '|---|---|---|',
    ...rows,
  ].join('\n');
  await writeReport('body-memory', 'Request body memory (issue 13)', table);
}

await main();
