import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { FileBundleStore } from '../../functions/adapters/local/file-bundle-store.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
} from '../../functions/emulator/dynamodb-local.ts';
import type { InMemoryFetch } from '../../functions/local-platform/in-memory-shell.ts';
import { LocalServer } from '../../functions/local-platform/local-server.ts';
import { ADMIN_KEY_FILE, bootstrapOwner } from '../../functions/platform/bootstrap.ts';
import { parseConfig, type Tier } from '../../functions/platform/config.ts';
import { DashboardAssets } from '../../functions/platform/dashboard-assets.ts';
import { createDeps, type Deps, type DepsOverrides } from '../../functions/platform/deps.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import { type Faults, injectFaults } from './dynamodb-faults.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { FakeClock } from './fake-clock.ts';

/** Where an in-memory platform's requests point: a name no socket answers (RFC 2606's `.test`). */
const IN_MEMORY_BASE = 'http://agenthost.test';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestPlatform {
  /** The server's URL; with `inMemory`, the base relative requests resolve against (no server). */
  url: string;
  /** The app called in memory, no socket (functions/local-platform/in-memory-shell.ts). */
  fetch: InMemoryFetch;
  deps: Deps;
  clock: FakeClock;
  dataDir: string;
  ownerKey: string;
  /** Every log line the platform wrote (debug level and up). */
  logs: string[];
  /** On the 'dynamodb-faults' backend: the refusals injected so far. */
  faults?: Faults;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<ApiResponse<T>>;
  createAccount(org: string, tier?: Tier): Promise<{ key: string; accountId: string; workspaceId: string }>;
  /** Bytes of answers the server has written and its clients not yet read (unread-answers.ts). */
  unreadBytes(): number;
  close(): Promise<void>;
}

/**
 * The local platform in this process, over real HTTP on a loopback port, on a fresh data dir, with
 * a fake clock. Every end-to-end test file starts one.
 */
export type Backend = 'sqlite' | 'dynamodb' | 'dynamodb-faults';
export const BACKENDS: Backend[] = ['sqlite', 'dynamodb'];
/**
 * DynamoDB Local behind the fault injector (dynamodb-faults.ts), for the tests of invariants that
 * racing writers share: transactions cancelled with TransactionConflict and requests throttled,
 * as the service does and DynamoDB Local never.
 */
export const BACKENDS_WITH_FAULTS: Backend[] = [...BACKENDS, 'dynamodb-faults'];

export async function startTestPlatform(
  env: Record<string, string> = {},
  backend: Backend = 'sqlite',
  overrides: DepsOverrides = {},
  /** A dashboard build to serve instead of web/dist's (test/dashboard/dashboard.test.ts builds its own). */
  options: {
    dashboardDir?: string;
    /**
     * The app called in memory only: no server is opened, `request` and `fetch` call the app with
     * a Request. For tests of the API that need no socket (no sandbox calling the platform back,
     * no client of its URL).
     */
    inMemory?: boolean;
  } = {},
): Promise<TestPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-test-'));
  let dynamo: DynamoDbLocal | undefined;
  let faultyClient: DynamoDBClient | undefined;
  let faults: Faults | undefined;
  let backendEnv: Record<string, string> = {};
  if (backend !== 'sqlite') {
    dynamo = await startDynamoDbLocal();
    // The SDK's default credential chain reads these; the fake ignores their values.
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    backendEnv = { ...dynamo.env, [ENV.bootstrapApiKey]: generateApiKey() };
  }
  const config = parseConfig({
    [ENV.dataDir]: dataDir,
    PORT: '0',
    [ENV.logLevel]: 'silent',
    ...backendEnv,
    ...env,
  });
  const clock = new FakeClock();
  const logs: string[] = [];
  let store = overrides.store;
  if (backend === 'dynamodb-faults' && dynamo) {
    faultyClient = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: DYNAMODB_LOCAL_REGION,
      credentials: DYNAMODB_LOCAL_CREDENTIALS,
    });
    faults = injectFaults(faultyClient);
    const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
    store ??= new DynamoDbStore({ tableName: dynamo.tableName, client: faultyClient, nowSeconds });
  }
  // In AWS mode on DynamoDB Local, bundles (and large outputs) are files, served by the local server
  // as S3 serves them: no S3 is reachable here.
  const bundles =
    overrides.bundles ??
    (backend === 'sqlite'
      ? undefined
      : new FileBundleStore(dataDir, {
          serverUrl: () => config.publicUrl,
          now: () => clock.now().getTime(),
        }));
  const deps = await createDeps(config, {
    clock,
    logger: createLogger('debug', (line) => logs.push(line)),
    ...overrides,
    ...(store ? { store } : {}),
    ...(bundles ? { bundles } : {}),
  });
  await bootstrapOwner(deps);
  const ownerKey = config.bootstrapApiKey ?? (await readFile(join(dataDir, ADMIN_KEY_FILE), 'utf8')).trim();
  // The dashboard as `npm start` serves it, when it is built.
  const server = new LocalServer(deps, { dashboard: DashboardAssets.load(options.dashboardDir) });
  const url = options.inMemory ? IN_MEMORY_BASE : await server.listen(0, '127.0.0.1');
  const request = requester(url, ownerKey, options.inMemory ? server.fetch : fetch);

  return {
    url,
    fetch: server.fetch,
    deps,
    clock,
    dataDir,
    ownerKey,
    logs,
    faults,
    request,
    async createAccount(org, tier = 'pro') {
      const created = await createAccount(deps, { org, tier });
      return { key: created.api_key, accountId: created.account.id, workspaceId: created.workspace_id };
    },
    unreadBytes: () => server.unread.bytes,
    async close() {
      if (!options.inMemory) await server.close();
      await deps.serviceRunner.close();
      // As the platform's process ending would: a command still running (a run cut off) goes too.
      await deps.sandbox.close?.();
      await deps.notifier.drain();
      await deps.store.close();
      faultyClient?.destroy();
      await dynamo?.close();
      // A run just cancelled may still be removing its sandbox directory (the bubblewrap spawner
      // does, in a process of its own): rm retries on ENOTEMPTY instead of failing the file's after
      // hook, which left the fake providers listening and the test process never exiting.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}

/** HTTP requests to `url` with `ownerKey` unless the options name another key (or `key: null`). */
export function requester(url: string, ownerKey: string, send: InMemoryFetch = fetch) {
  return async <T = Record<string, unknown>>(
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
    const res = await send(`${url}${path}`, { method, headers, body });
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
}

/** Asserts the spec's error envelope and returns it. */
export function errorOf(res: ApiResponse): {
  code: string;
  message: string;
  is_retryable: boolean;
  fields: string[];
} {
  const body = res.body as {
    error?: {
      code: string;
      message: string;
      is_retryable: boolean;
      details?: { fields?: { field: string }[] };
    };
    metadata?: { request_id?: string };
  };
  if (!body.error || typeof body.metadata?.request_id !== 'string') {
    throw new Error(`Not an error envelope (status ${res.status}): ${res.text}`);
  }
  return { ...body.error, fields: (body.error.details?.fields ?? []).map((f) => f.field) };
}
