import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../../functions/adapters/aws/dynamodb-table.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
  type DynamoDbEngine,
  startDynamoDbEngine,
} from '../../functions/emulator/dynamodb-local.ts';
import { ENV } from '../../functions/shared/env-names.ts';

/**
 * DynamoDB Local for the tests (functions/emulator/dynamodb-local.ts): under `npm test` one engine
 * for the whole run, in memory, started by its global setup (test/setup/global.ts); a test file
 * run alone starts one for its process on first use (about two seconds). Each `startDynamoDbLocal`
 * gets a table of its own with the deployment's definition (indexes and all), dropped again by `close`. `npm test`'s
 * pretest installs Java when it is missing (test/setup/ensure-test-tools.ts).
 */
export interface DynamoDbLocal {
  endpoint: string;
  tableName: string;
  /** The environment of a platform process in AWS mode on this table. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The environment variable naming the run's shared engine (test/setup/global.ts sets it). */
export const SHARED_DYNAMODB_ENDPOINT = 'AGENTHOST_TEST_DYNAMODB_ENDPOINT';

let engine: Promise<Pick<DynamoDbEngine, 'endpoint'>> | undefined;
let tables = 0;

/** The engine's endpoint: the run's shared one, else this process's own, started on first use. */
export async function dynamoDbLocalEndpoint(): Promise<string> {
  const shared = process.env[SHARED_DYNAMODB_ENDPOINT];
  if (shared) engine ??= Promise.resolve({ endpoint: shared });
  engine ??= startDynamoDbEngine().then(
    (e) => {
      // The engine goes with this test process without holding it open.
      e.process.unref();
      (e.process.stderr as unknown as { unref?: () => void } | null)?.unref?.();
      return e;
    },
    (err: unknown) => {
      engine = undefined;
      throw err;
    },
  );
  return (await engine).endpoint;
}

export async function startDynamoDbLocal(name = 'agenthost-test'): Promise<DynamoDbLocal> {
  const endpoint = await dynamoDbLocalEndpoint();
  const tableName = `${name}-${process.pid}-${++tables}`;
  const client = new DynamoDBClient({
    endpoint,
    region: DYNAMODB_LOCAL_REGION,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  return {
    endpoint,
    tableName,
    env: {
      [ENV.mode]: 'aws',
      [ENV.tableName]: tableName,
      [ENV.bundleBucket]: 'agenthost-test-bundles',
      [ENV.dynamodbEndpoint]: endpoint,
      [ENV.awsRegion]: DYNAMODB_LOCAL_REGION,
      AWS_ACCESS_KEY_ID: DYNAMODB_LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: DYNAMODB_LOCAL_CREDENTIALS.secretAccessKey,
    },
    async close() {
      client.destroy();
      await dropTable(endpoint, tableName);
    },
  };
}

/**
 * Drops a table on an engine that outlives it (the run's shared one): a test's own table, or an
 * emulated deployment's (test/helpers/deployment.ts).
 */
export async function dropTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: DYNAMODB_LOCAL_REGION,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });
  try {
    await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  } finally {
    client.destroy();
  }
}
