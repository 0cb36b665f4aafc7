import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../platform/config.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import { type DynamoDbEngine, startDynamoDbEngine } from './dynamodb-local.ts';

/**
 * The engine the deployment's table lives on. Its own DynamoDB Local by default, keeping its files
 * under aws/dynamodb. With PLATFORM_EMULATOR_DYNAMODB_ENDPOINT, one already running (the tests
 * share their run's, test/setup/global.ts): then every table is named for this data dir
 * (`<stack>-<logical id>-<12 hex of the data dir's path>`), so deployments on one engine never
 * share a table and a restart on the same data dir finds its own again; closing leaves the engine
 * and the table as they are.
 */
export async function dynamoDbEngineFor(
  config: Config,
  root: string,
  resolver: TemplateResolver,
): Promise<Pick<DynamoDbEngine, 'endpoint' | 'close'>> {
  if (config.emulatorDynamodbEndpoint) {
    const suffix = createHash('sha256').update(resolve(config.dataDir)).digest('hex').slice(0, 12);
    for (const { stack, logicalId } of resolver.resourcesOfType('AWS::DynamoDB::Table'))
      resolver.setPhysicalId(stack.stackName, logicalId, `${stack.stackName}-${logicalId}-${suffix}`);
    return { endpoint: config.emulatorDynamodbEndpoint.replace(/\/$/, ''), close: async () => undefined };
  }
  await mkdir(join(root, 'dynamodb'), { recursive: true });
  return startDynamoDbEngine({ dbPath: join(root, 'dynamodb') });
}
