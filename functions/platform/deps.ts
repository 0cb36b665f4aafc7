import { join } from 'node:path';
import { type Clock, epochSeconds, systemClock } from '../ports/clock.ts';
import type { Store } from '../ports/store.ts';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';

/** Everything a handler or core function may touch: built once per process from config. */
export interface Deps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
}

export interface DepsOverrides {
  clock?: Clock;
  logger?: Logger;
}

/**
 * The one dependency factory. Adapters are imported dynamically so a Lambda bundle for AWS mode
 * never evaluates the local adapters' modules at cold start, and vice versa.
 */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const store =
    config.mode === 'aws' ? await createAwsStore(config, clock) : await createLocalStore(config, clock);
  return { config, store, clock, logger };
}

export const SQLITE_FILE = 'agenthost.db';

export async function createLocalStore(config: Config, clock: Clock): Promise<Store> {
  if (config.mode !== 'local') throw new Error('The SQLite store runs only in PLATFORM_MODE=local');
  const { SqliteStore } = await import('../adapters/local/sqlite-store.ts');
  return new SqliteStore(join(config.dataDir, SQLITE_FILE), { nowSeconds: () => epochSeconds(clock) });
}

export async function createAwsStore(config: Config, clock: Clock): Promise<Store> {
  if (config.mode !== 'aws' || !config.tableName) {
    throw new Error('The DynamoDB store runs only in PLATFORM_MODE=aws with PLATFORM_TABLE_NAME set');
  }
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDbStore } = await import('../adapters/aws/dynamodb-store.ts');
  const client = new DynamoDBClient({
    region: config.awsRegion,
    ...(config.dynamodbEndpoint ? { endpoint: config.dynamodbEndpoint } : {}),
  });
  return new DynamoDbStore({ tableName: config.tableName, client, nowSeconds: () => epochSeconds(clock) });
}
