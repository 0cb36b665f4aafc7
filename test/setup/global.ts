/**
 * `npm test`'s global setup (`--test-global-setup`): what every test file would otherwise start
 * for itself, started once for the run. Each test file runs in a process of its own, spawned after
 * this has run, and reads what it needs from the environment set here.
 *
 * - DynamoDB Local, in memory: each test process makes its own tables on it
 *   (test/helpers/dynamodb-local.ts), so files share the engine and never a table. A file run
 *   alone (`node --test test/x.test.ts`) starts an engine of its own as before.
 */
import { type DynamoDbEngine, startDynamoDbEngine } from '../../functions/emulator/dynamodb-local.ts';
import { SHARED_DYNAMODB_ENDPOINT } from '../helpers/dynamodb-local.ts';

let engine: DynamoDbEngine | undefined;

export async function globalSetup(): Promise<void> {
  engine = await startDynamoDbEngine();
  process.env[SHARED_DYNAMODB_ENDPOINT] = engine.endpoint;
}

export async function globalTeardown(): Promise<void> {
  await engine?.close();
}
