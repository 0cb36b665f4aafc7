import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accountsDeps } from '../../functions/cli/accounts-deps.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { emulatedAdminKeyFile } from '../../functions/emulator/emulated-deployment.ts';
import { ADMIN_KEY_FILE } from '../../functions/platform/bootstrap.ts';
import { parseConfig, type Tier } from '../../functions/platform/config.ts';
import type { ApiResponse, RequestOptions } from './platform.ts';
import { CLI } from './process.ts';

/**
 * One end-to-end suite, two deployments: the test files under test/e2e/ run each case against
 * `agenthost start` (npm start) and `agenthost start --emulated` (npm run start:emulated: the
 * synthesized Lambda assets behind the emulated API Gateway, DynamoDB Local, S3 and the control
 * planes' stand-ins), each its own process on a fresh data dir, reached only over HTTP. Accounts
 * are created as `agenthost accounts create` creates them (functions/cli/accounts-deps.ts). A
 * difference in behaviour between the two is a failure.
 */

export type DeploymentKind = 'local' | 'emulated';
export const DEPLOYMENTS: DeploymentKind[] = ['local', 'emulated'];

/**
 * Every emulated start of the test run shares one synthesized assembly (synthesis bundles every
 * Lambda: about a minute); it is made again only when a source file changes.
 */
const SHARED_ASSEMBLY = join(
  tmpdir(),
  // One per checkout: another checkout's run would replace it while this one's functions run from it.
  `agenthost-test-assembly-${createHash('sha256')
    .update(fileURLToPath(import.meta.url))
    .digest('hex')
    .slice(0, 12)}`,
);

export interface Deployment {
  kind: DeploymentKind;
  url: string;
  dataDir: string;
  ownerKey: string;
  /** Everything the process printed. */
  output(): string;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<ApiResponse<T>>;
  createAccount(org: string, tier?: Tier): Promise<{ key: string; accountId: string; workspaceId: string }>;
  close(): Promise<void>;
}

async function waitForUrl(child: ChildProcess, output: () => string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the platform did not start in ${timeoutMs / 1000} s:\n${output()}`)),
      timeoutMs,
    );
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(output());
      if (m?.[1]) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the platform exited with ${code}:\n${output()}`));
    });
  });
}

export async function startDeployment(
  kind: DeploymentKind,
  env: Record<string, string> = {},
): Promise<Deployment> {
  const dataDir = await mkdtemp(join(tmpdir(), `agenthost-e2e-${kind}-`));
  const args = kind === 'emulated' ? ['start', '--emulated'] : ['start'];
  const child = spawn(process.execPath, [CLI, ...args], {
    env: {
      ...process.env,
      PORT: '0',
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_LOG_LEVEL: 'warn',
      PLATFORM_EMULATOR_ASSEMBLY_DIR: SHARED_ASSEMBLY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  let url: string;
  try {
    // A first emulated start synthesizes the CDK app.
    url = await waitForUrl(child, () => out, kind === 'emulated' ? 300_000 : 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const ownerKey =
    env.PLATFORM_BOOTSTRAP_API_KEY ??
    (
      await readFile(
        kind === 'emulated' ? emulatedAdminKeyFile(dataDir) : join(dataDir, ADMIN_KEY_FILE),
        'utf8',
      )
    ).trim();

  const request = async <T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? ownerKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = {};
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { raw: text };
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };

  return {
    kind,
    url,
    dataDir,
    ownerKey,
    output: () => out,
    request,
    async createAccount(org, tier = 'pro') {
      const deps = await accountsDeps(
        parseConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_LOG_LEVEL: 'silent' }),
      );
      try {
        const created = await createAccount(deps, { org, tier });
        return { key: created.api_key, accountId: created.account.id, workspaceId: created.workspace_id };
      } finally {
        await deps.store.close();
      }
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
