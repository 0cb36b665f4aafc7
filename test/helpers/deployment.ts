import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accountsDeps } from '../../functions/cli/accounts-deps.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { emulatedAdminKeyFile } from '../../functions/emulator/emulated-deployment.ts';
import { readEndpointsFile } from '../../functions/emulator/emulated-endpoints.ts';
import { ADMIN_KEY_FILE } from '../../functions/platform/bootstrap.ts';
import { parseConfig, type Tier } from '../../functions/platform/config.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { dropTable, SHARED_DYNAMODB_ENDPOINT } from './dynamodb-local.ts';
import { type ApiResponse, type RequestOptions, requester } from './platform.ts';
import { type RunningPlatform, startPlatformProcess } from './process.ts';

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
export const SHARED_ASSEMBLY = join(
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

/**
 * Under `npm test` an emulated deployment keeps its table on the run's one DynamoDB Local
 * (PLATFORM_EMULATOR_DYNAMODB_ENDPOINT; test/setup/global.ts), not on an engine of its own: a JVM
 * less to start for each, about 4 s of CPU. `ownDynamoDb` starts its own anyway (a test of what
 * the deployment itself listens on).
 */
function sharedEngineEnv(kind: DeploymentKind, ownDynamoDb: boolean): Record<string, string> {
  const shared = process.env[SHARED_DYNAMODB_ENDPOINT];
  return kind === 'emulated' && shared && !ownDynamoDb ? { [ENV.emulatorDynamodbEndpoint]: shared } : {};
}

export async function startDeployment(
  kind: DeploymentKind,
  env: Record<string, string> = {},
  { ownDynamoDb = false }: { ownDynamoDb?: boolean } = {},
): Promise<Deployment> {
  const dataDir = await mkdtemp(join(tmpdir(), `agenthost-e2e-${kind}-`));
  const engineEnv = sharedEngineEnv(kind, ownDynamoDb);
  let platform: RunningPlatform;
  try {
    platform = await startPlatformProcess(
      { [ENV.dataDir]: dataDir, [ENV.emulatorAssemblyDir]: SHARED_ASSEMBLY, ...engineEnv, ...env },
      // A first emulated start synthesizes the CDK app.
      kind === 'emulated' ? { args: ['start', '--emulated'], timeoutMs: 300_000 } : { timeoutMs: 30_000 },
    );
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const { url } = platform;
  const ownerKey =
    env[ENV.bootstrapApiKey] ??
    (
      await readFile(
        kind === 'emulated' ? emulatedAdminKeyFile(dataDir) : join(dataDir, ADMIN_KEY_FILE),
        'utf8',
      )
    ).trim();

  const request = requester(url, ownerKey);
  let sharedTable: string | undefined;
  if (engineEnv[ENV.emulatorDynamodbEndpoint]) {
    // The deployment is on the shared engine, in a table of its own (named for its data dir).
    const endpoints = readEndpointsFile(dataDir);
    if (!endpoints || endpoints.dynamodbEndpoint !== engineEnv[ENV.emulatorDynamodbEndpoint])
      throw new Error(
        `the emulated deployment is not on the run's DynamoDB Local: ${JSON.stringify(endpoints)}`,
      );
    sharedTable = endpoints.tableName;
  }

  return {
    kind,
    url,
    dataDir,
    ownerKey,
    output: platform.output,
    request,
    async createAccount(org, tier = 'pro') {
      const deps = await accountsDeps(parseConfig({ [ENV.dataDir]: dataDir, [ENV.logLevel]: 'silent' }));
      try {
        const created = await createAccount(deps, { org, tier });
        return { key: created.api_key, accountId: created.account.id, workspaceId: created.workspace_id };
      } finally {
        await deps.store.close();
      }
    },
    async close() {
      const timer = setTimeout(() => platform.child.kill('SIGKILL'), 15_000);
      await platform.stop('SIGTERM');
      clearTimeout(timer);
      const shared = engineEnv[ENV.emulatorDynamodbEndpoint];
      if (shared && sharedTable) await dropTable(shared, sharedTable);
      // The platform's sandboxes may still be removing their directories (test/helpers/platform.ts).
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}
