/**
 * A platform of a checkout started as `npm start` starts it, on a free loopback port with a data dir
 * of its own and a known owner key, for the benches that measure a whole platform process from
 * outside (bench/body-memory.ts, bench/unread-answers.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { platformStartArgs } from './platform-command.ts';

export interface BenchPlatform {
  child: ChildProcess;
  port: number;
  dataDir: string;
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const healthy = (port: number) =>
  new Promise<boolean>((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/health' }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });

/** Starts the platform of `root` with `key` as its owner's key and `env` besides; resolves once /health answers. */
export async function startBenchPlatform(
  root: string,
  { key, name, env = {} }: { key: string; name: string; env?: Record<string, string> },
): Promise<BenchPlatform> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), `agenthost-bench-${name}-`));
  const child = spawn(process.execPath, platformStartArgs(root), {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: key,
      PLATFORM_LOG_LEVEL: 'silent',
      ...env,
    },
  });
  // A start takes seconds (the store opens, the dashboard is found): polled, as a bench may.
  for (let i = 0; i < 300; i++) {
    if (await healthy(port)) return { child, port, dataDir };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`the platform in ${root} did not start`);
}

/** Stops the platform and removes its data dir. */
export async function stopBenchPlatform(p: BenchPlatform): Promise<void> {
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
  await rm(p.dataDir, { recursive: true, force: true });
}
