/**
 * What the tenant benches share (bench/read-rate.ts, bench/flood.ts): two platforms as `npm start`
 * runs them (local mode, SQLite, each its own process and data dir), one with
 * PLATFORM_REQUEST_RATE=off ("without the rate") and one as it ships ("with the rate"); on each a
 * "light" tenant (the platform's enterprise owner, whose few small requests stay well within its
 * rate) and a "heavy" free account; the light tenant's latency one request at a time; and the heavy
 * account's load, from a worker thread (so that its answers do not delay the light tenant's
 * requests in this process), retrying at once when refused, as a client that ignores Retry-After
 * would.
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

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OWNER_KEY = `ahk_bench_${'r'.repeat(40)}`;
/** The light tenant's pace: 500 requests a second at most, 30,000 a minute, within its tier's rate. */
const LIGHT_INTERVAL_MS = 2;

export interface Platform {
  name: string;
  url: string;
  child: Awaited<ReturnType<typeof startProcess>>['child'];
  dataDir: string;
  heavyKey: string;
  lightKey: string;
  /** The heavy account's personal workspace. */
  heavyWorkspace: string;
}

/** The heavy account's load: `connections` loops of GET `path` for `ms`. */
export interface HeavyLoad {
  path: string;
  connections: number;
  ms: number;
}

interface HeavyJob extends HeavyLoad {
  url: string;
  key: string;
}

export interface HeavyResult {
  served: number;
  refused: number;
  bytes: number;
}

/** The heavy account's loops (in a worker thread): GET until the time is up. */
async function load(job: HeavyJob): Promise<HeavyResult> {
  const dispatcher = new Agent({ connections: job.connections, keepAliveTimeout: 4_000 });
  // The light tenant's phase starts when the loops do (the worker takes a while to load).
  parentPort?.postMessage('ready');
  const until = Date.now() + job.ms;
  const result: HeavyResult = { served: 0, refused: 0, bytes: 0 };
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
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
export const setup = benchDispatcher(1);

export async function api<T>(
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

/** The two platforms of a tenant bench: without the rate, then as it ships. */
export async function startPlatforms(): Promise<Platform[]> {
  const platforms: Platform[] = [];
  try {
    platforms.push(await startPlatform('without the rate', { [ENV.requestRate]: 'off' }));
    platforms.push(await startPlatform('with the rate', {}));
    return platforms;
  } catch (err) {
    await stopPlatforms(platforms);
    throw err;
  }
}

export async function stopPlatforms(platforms: Platform[]): Promise<void> {
  await setup.close();
  for (const p of platforms) {
    await stop(p.child);
    await rm(p.dataDir, { recursive: true, force: true });
  }
}

async function startPlatform(name: string, env: Record<string, string>): Promise<Platform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-tenants-'));
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
    const heavyKey = await createAccount(dataDir, 'heavy');
    for (let i = 0; i < 5; i++) await api(url, OWNER_KEY, 'POST', '/tasks', { title: `small ${i}` });
    const heavyWorkspace = await personalWorkspace(url, heavyKey);
    return { name, url, child, dataDir, heavyKey, lightKey: OWNER_KEY, heavyWorkspace };
  } catch (err) {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function personalWorkspace(url: string, key: string): Promise<string> {
  const list = await api<{ workspaces: { id: string; personal: boolean }[] }>(url, key, 'GET', '/workspaces');
  const personal = list.body.workspaces.find((w) => w.personal);
  if (!personal) throw new Error('no personal workspace');
  return personal.id;
}

/** The account a key belongs to: the only member of its personal workspace. */
export async function accountIdOf(url: string, key: string): Promise<string> {
  const personal = await personalWorkspace(url, key);
  const members = await api<{ members: { account_id: string }[] }>(
    url,
    key,
    'GET',
    `/workspaces/${personal}/members`,
  );
  const id = members.body.members[0]?.account_id;
  if (!id) throw new Error('no member');
  return id;
}

/** The light tenant's GET /tasks, one after another for `ms`: each latency in ms, ascending. */
export async function lightLatencies(p: Platform, ms: number): Promise<number[]> {
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

/** Starts the heavy account's load: resolves once its loops run, with their result to come. */
export async function startHeavy(p: Platform, heavy: HeavyLoad): Promise<Promise<HeavyResult>> {
  const job: HeavyJob = { ...heavy, url: p.url, key: p.heavyKey };
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

// In the worker thread (this module as its entry): the heavy account's load.
if (!isMainThread) parentPort?.postMessage(await load(workerData as HeavyJob));
