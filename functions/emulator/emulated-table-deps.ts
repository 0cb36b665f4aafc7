import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '../adapters/aws/dynamodb-store.ts';
import { type Config, parseConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';
import { ENV } from '../shared/env-names.ts';
import { DYNAMODB_LOCAL_CREDENTIALS } from './dynamodb-local.ts';
import type { EmulatedEndpoints } from './emulated-endpoints.ts';

/**
 * The platform's dependencies in AWS mode on an emulated deployment's table (DynamoDB Local), for
 * what runs outside its functions: the owner's bootstrap and `agenthost accounts create`.
 */
export async function emulatedTableDeps(config: Config, endpoints: EmulatedEndpoints): Promise<Deps> {
  const awsConfig = parseConfig({
    [ENV.mode]: 'aws',
    [ENV.tableName]: endpoints.tableName,
    [ENV.dataDir]: config.dataDir,
    [ENV.logLevel]: 'silent',
    [ENV.awsRegion]: endpoints.region,
    [ENV.bootstrapTier]: config.bootstrapTier,
    ...(config.bootstrapApiKey ? { [ENV.bootstrapApiKey]: config.bootstrapApiKey } : {}),
  });
  const client = new DynamoDBClient({
    endpoint: endpoints.dynamodbEndpoint,
    region: endpoints.region,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });
  // The store owns the client it is given only when it builds it, so close destroys this one here.
  const store = new DynamoDbStore({ tableName: endpoints.tableName, client });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    client.destroy();
  };
  return createDeps(awsConfig, { store });
}
