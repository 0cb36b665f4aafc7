/**
 * `npm run bench:read-rate`: what one account pulling large list pages does to another tenant's
 * latency, without the per-account request rate and with it (issue 56, point 6; docs/http.md,
 * "Request rate"), side by side in one run.
 *
 * Two platforms run as `npm start` runs them (local mode, SQLite, each its own process and data
 * dir): one with PLATFORM_REQUEST_RATE=off ("without the rate"), one as it ships ("with the
 * rate"). On each, a workspace holds 120 tasks of 50,000-character descriptions, so a page of them
 * is about 6 MB, and a free account ("heavy") is a member of it; another tenant ("light", the
 * platform's enterprise account, whose rate its own requests here stay well within) has a few
 * small tasks. Each repeat measures, on each platform: the light tenant's GET /tasks, one at a time
 * and at most one every LIGHT_INTERVAL_MS, for BENCH_PHASE_MS alone (p50), then for as long again
 * while the heavy account pulls its 6 MB page four at a time (from a worker thread, so that reading
 * 6 MB bodies does not delay the light tenant's requests in this process), retrying at once when
 * refused, as a client that ignores Retry-After would. The table gives the median over the repeats of the light p50s and
 * of their ratio (loaded / alone), and what the heavy account got. Results go to
 * docs/performance.md.
 */

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { ENV } from '../functions/shared/env-names.ts';
import { benchDispatcher } from './bench-agent.ts';
import { startProcess, stop } from './bench-process.ts';
import { platformStartArgs } from './platform-command.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 8000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BIG_TASKS = 120;
const DESCRIPTION = 'd'.repeat(50_000);
const OWNER_KEY = `ahk_bench_${'r'.repeat(40)}`;
const PULLERS = 4;
/** The light tenant's pace: 500 requests a second at most, 30,000 a minute, within its tier's rate. */
const LIGHT_INTERVAL_MS = 2;

interface Platform {
  name: string;
  url: string;
  child: Awaited<ReturnType<typeof startProcess>>['child'];
  dataDir: string;
  heavyKey: string;
  lightKey: string;
  bigWorkspace: string;
}

interface HeavyJob {
  url: string;
  key: string;
  path: string;
  ms: number;
}

interface HeavyResult {
  served: number;
  refused: number;
  bytes: number;
}

/** The heavy account's pullers (in a worker thread): PULLERS loops of GET until the time is up. */
async function pull(job: HeavyJob): Promise<HeavyResult> {
  const dispatcher = new Agent({ connections: PULLERS, keepAliveTimeout: 4_000 });
  // The light tenant's phase starts when the pullers do (the worker takes a while to load).
  parentPort?.postMessage('ready');
  const until = Date.now() + job.ms;
  const result: HeavyResult = { served: 0, refused: 0, bytes: 0 };
  await Promise.all(
    Array.from({ length: PULLERS }, async () => {
      while (Date.now() < until) {
        const res = await request(`${job.url}${job.path}`, {
          dispatcher,
          headers: { authorization: `Bearer ${job.key}` },
        });
        const body = Buffer.from(await res.body.arrayBuffer());
        if (res.statusCode === 200) {
          result.served++;
          result.bytes += body.length;
        } else if (res.statusCode === 429) result.refused++;
        else throw new Error(`heavy GET answered ${res.statusCode}: ${body.toString().slice(0, 300)}`);
      }
    }),
  );
  await dispatcher.close();
  return result;
}

/** The setup's client: an idle connection let go before the server's keep-alive ends (bench-agent.ts). */
const setup = benchDispatcher(1);

async function api<T>(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await request(`${url}${path}`, {
    dispatcher: setup,
    method: method as 'GET',
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300)
    throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return { status: res.statusCode, body: (text ? JSON.parse(text) : {}) as T };
}

/**
 * A free account made on a running platform's data dir, as an operator makes one (not blocking this
 * process meanwhile: its idle keep-alive connections must still be let go on time).
 */
async function createAccount(dataDir: string, org: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'bin', 'agenthost.ts'), 'accounts', 'create', '--org', org, '--tier', 'free', '--json'],
    { env: { ...process.env, [ENV.dataDir]: dataDir }, encoding: 'utf8' },
  );
  return (JSON.parse(stdout) as { api_key: string }).api_key;
}

async function startPlatform(name: string, env: Record<string, string>): Promise<Platform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-rate-'));
  const { child, url } = await startProcess(platformStartArgs(ROOT), {
    HOST: '127.0.0.1',
    PORT: '0',
    [ENV.dataDir]: dataDir,
    [ENV.logLevel]: 'warn',
    [ENV.bootstrapTier]: 'enterprise',
    [ENV.bootstrapApiKey]: OWNER_KEY,
    ...env,
  });
  try {
    return { name, url, child, dataDir, ...(await fill(url, dataDir)) };
  } catch (err) {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** The big pages and the accounts on a started platform (module comment). */
async function fill(url: string, dataDir: string) {
  const ws = await api<{ id: string }>(url, OWNER_KEY, 'POST', '/workspaces', { name: 'Big pages' });
  for (let i = 0; i < BIG_TASKS; i++) {
    await api(url, OWNER_KEY, 'POST', '/tasks', {
      title: `big ${i}`,
      description: DESCRIPTION,
      workspace_id: ws.body.id,
    });
  }
  const heavyKey = await createAccount(dataDir, 'heavy');
  const lightKey = OWNER_KEY;
  // The heavy account joins the workspace of big tasks: invited by its owner, accepted.
  const heavyId = await accountIdOf(url, heavyKey);
  const invitation = await api<{ id: string }>(url, OWNER_KEY, 'POST', `/workspaces/${ws.body.id}/invite`, {
    account_id: heavyId,
  });
  await api(url, heavyKey, 'POST', `/invitations/${invitation.body.id}/accept`);
  for (let i = 0; i < 5; i++) await api(url, lightKey, 'POST', '/tasks', { title: `small ${i}` });
  return { heavyKey, lightKey, bigWorkspace: ws.body.id };
}

/** The account a key belongs to: the owner of its personal workspace. */
async function accountIdOf(url: string, key: string): Promise<string> {
  const list = await api<{ workspaces: { id: string; personal: boolean }[] }>(url, key, 'GET', '/workspaces');
  const personal = list.body.workspaces.find((w) => w.personal);
  if (!personal) throw new Error('no personal workspace');
  const members = await api<{ members: { account_id: string }[] }>(
    url,
    key,
    'GET',
    `/workspaces/${personal.id}/members`,
  );
  const id = members.body.members[0]?.account_id;
  if (!id) throw new Error('no member');
  return id;
}

/** The light account's GET /tasks, one after another for `ms`: each latency in ms. */
async function lightLatencies(p: Platform, ms: number): Promise<number[]> {
  const dispatcher = new Agent({ connections: 1, keepAliveTimeout: 4_000 });
  const until = Date.now() + ms;
  const out: number[] = [];
  while (Date.now() < until) {
    const t0 = performance.now();
    const res = await request(`${p.url}/tasks`, {
      dispatcher,
      headers: { authorization: `Bearer ${p.lightKey}` },
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`the light tenant was answered ${res.statusCode}`);
    const took = performance.now() - t0;
    out.push(took);
    if (took < LIGHT_INTERVAL_MS) await new Promise((r) => setTimeout(r, LIGHT_INTERVAL_MS - took));
  }
  await dispatcher.close();
  return out.sort((a, b) => a - b);
}

/** Starts the heavy account's pullers for `ms`: resolves once they run, with their result to come. */
async function startHeavy(p: Platform, ms: number): Promise<Promise<HeavyResult>> {
  const job: HeavyJob = {
    url: p.url,
    key: p.heavyKey,
    path: `/workspaces/${p.bigWorkspace}/tasks?limit=200`,
    ms,
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: job });
  let ready: () => void = () => {};
  const started = new Promise<void>((r) => {
    ready = r;
  });
  const result = new Promise<HeavyResult>((resolve, reject) => {
    worker.on('message', (m: HeavyResult | 'ready') => (m === 'ready' ? ready() : resolve(m)));
    worker.once('error', reject);
  });
  await Promise.race([started, result]);
  return result;
}

interface Round {
  alone: number;
  loaded: number;
  heavy: HeavyResult;
}

async function main(): Promise<void> {
  const platforms: Platform[] = [];
  const rounds = new Map<string, Round[]>([
    ['without the rate', []],
    ['with the rate', []],
  ]);
  try {
    platforms.push(await startPlatform('without the rate', { [ENV.requestRate]: 'off' }));
    platforms.push(await startPlatform('with the rate', {}));
    for (let r = 0; r < REPEATS; r++) {
      for (const p of r % 2 ? [...platforms].reverse() : platforms) {
        const alone = await lightLatencies(p, PHASE_MS);
        const pulling = await startHeavy(p, PHASE_MS);
        const [loaded, heavy] = await Promise.all([lightLatencies(p, PHASE_MS), pulling]);
        const round = { alone: quantile(alone, 0.5), loaded: quantile(loaded, 0.5), heavy };
        rounds.get(p.name)?.push(round);
        process.stdout.write(
          `${p.name}: light p50 ${round.alone.toFixed(2)} ms alone, ${round.loaded.toFixed(2)} ms loaded; heavy ${heavy.served} pages (${(heavy.bytes / 1e6).toFixed(0)} MB), ${heavy.refused} refused\n`,
        );
      }
    }
  } finally {
    await setup.close();
    for (const p of platforms) {
      await stop(p.child);
      await rm(p.dataDir, { recursive: true, force: true });
    }
  }
  const f = (n: number) => n.toFixed(2);
  const rows = platforms.map((p) => {
    const rs = rounds.get(p.name) ?? [];
    const perSecond = (n: (r: Round) => number) => median(rs.map((r) => n(r) / (PHASE_MS / 1000)));
    return `| ${p.name} | ${f(median(rs.map((r) => r.alone)))} | ${f(median(rs.map((r) => r.loaded)))} | ${f(median(rs.map((r) => r.loaded / r.alone)))} | ${perSecond((r) => r.heavy.served).toFixed(1)} | ${f(perSecond((r) => r.heavy.bytes) / 1e6)} | ${perSecond((r) => r.heavy.refused).toFixed(0)} |`;
  });
  const ratio = (name: string) => median((rounds.get(name) ?? []).map((r) => r.loaded / r.alone));
  const table = [
    `${machineLine()}; ${REPEATS} repeats of ${PHASE_MS / 1000} s alone then ${PHASE_MS / 1000} s beside ${PULLERS} pullers of a ${((BIG_TASKS * DESCRIPTION.length) / 1e6).toFixed(0)} MB page (a free account), per platform, both platforms in one run.`,
    '',
    '| platform | light p50 alone (ms) | light p50 beside the puller (ms) | ratio | heavy pages a second | heavy MB a second | heavy refusals a second |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `The other tenant's p50 beside the puller, against its p50 alone: ${f(ratio('without the rate'))}× without the rate, ${f(ratio('with the rate'))}× with it.`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  await writeReport(
    'read-rate',
    'A free account pulling large pages beside another tenant (issue 56)',
    table,
  );
}

// Last, once every declaration above is initialized: the worker thread pulls, the main thread measures.
if (!isMainThread) {
  parentPort?.postMessage(await pull(workerData as HeavyJob));
} else {
  await main();
}
