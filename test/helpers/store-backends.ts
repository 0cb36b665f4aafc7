import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import type { Store } from '../../functions/ports/store.ts';
import { type FaultOptions, type Faults, injectFaults } from './dynamodb-faults.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';

/**
 * The two engines a Store runs on, for tests that hold both to one behaviour (the store contract,
 * the concurrency slots): SQLite on a temporary file, and DynamoDB Local, AWS's own engine.
 */
export interface StoreBackend {
  /** A store on the shared backend. `nowSeconds` sets its TTL clock; the suite closes what it opens. */
  open(nowSeconds?: () => number): Store;
  close(): Promise<void>;
  /** The refusals injected so far, on a backend with faults (dynamodb-faults.ts). */
  faults?: Faults;
}

export async function sqliteBackend(): Promise<StoreBackend> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-store-'));
  const file = join(dir, 'store.db');
  return {
    open: (nowSeconds) => new SqliteStore(file, { nowSeconds }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * DynamoDB Local on a loopback port (dynamodb-local.ts): its conditions, transactions and
 * cancellation reasons are the real engine's. The client gets only the endpoint, a region and
 * dummy static credentials, so nothing is looked up in the environment.
 */
export async function dynamoDbLocalBackend(
  name = 'agenthost-contract',
  faultOptions?: FaultOptions,
): Promise<StoreBackend> {
  const local = await startDynamoDbLocal(name);
  const client = new DynamoDBClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const faults = faultOptions && injectFaults(client, faultOptions);
  return {
    faults,
    open: (nowSeconds) => new DynamoDbStore({ tableName: local.tableName, client, nowSeconds }),
    close: async () => {
      client.destroy();
      await local.close();
    },
  };
}

/**
 * DynamoDB Local behind the fault injector (dynamodb-faults.ts): a share of transactions cancelled
 * with TransactionConflict and of requests throttled, as the service does under contention and
 * load, so every invariant is held where DynamoDB Local alone never conflicts.
 */
export function faultyDynamoDbLocalBackend(
  name = 'agenthost-faults',
  options: FaultOptions = {},
): Promise<StoreBackend> {
  return dynamoDbLocalBackend(name, options);
}
