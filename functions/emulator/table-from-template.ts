import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { TemplateResolver } from './cloudformation-template.ts';

/**
 * Every AWS::DynamoDB::Table of the templates, created in DynamoDB Local as CloudFormation would
 * create it: key schema, attribute definitions, global secondary indexes with their projections,
 * billing mode and time to live. A table that exists already (a restart) is left as it is.
 */
export async function createTablesFromTemplate(
  resolver: TemplateResolver,
  client: DynamoDBClient,
): Promise<string[]> {
  const names: string[] = [];
  for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::DynamoDB::Table')) {
    const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as Record<string, unknown>;
    const TableName = resolver.physicalName(stack, logicalId);
    names.push(TableName);
    try {
      await client.send(new DescribeTableCommand({ TableName }));
      continue;
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
    const input: CreateTableCommandInput = {
      TableName,
      KeySchema: p.KeySchema as CreateTableCommandInput['KeySchema'],
      AttributeDefinitions: p.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
      BillingMode: (p.BillingMode as CreateTableCommandInput['BillingMode']) ?? 'PROVISIONED',
      ...(p.GlobalSecondaryIndexes
        ? {
            GlobalSecondaryIndexes: (p.GlobalSecondaryIndexes as Record<string, unknown>[]).map((g) => ({
              IndexName: g.IndexName as string,
              KeySchema: g.KeySchema as NonNullable<CreateTableCommandInput['KeySchema']>,
              Projection: g.Projection as { ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE' },
              ...(g.ProvisionedThroughput
                ? {
                    ProvisionedThroughput: g.ProvisionedThroughput as {
                      ReadCapacityUnits: number;
                      WriteCapacityUnits: number;
                    },
                  }
                : {}),
            })),
          }
        : {}),
      ...(p.ProvisionedThroughput
        ? {
            ProvisionedThroughput: p.ProvisionedThroughput as {
              ReadCapacityUnits: number;
              WriteCapacityUnits: number;
            },
          }
        : {}),
      ...(p.StreamSpecification
        ? { StreamSpecification: { StreamEnabled: true, ...(p.StreamSpecification as object) } }
        : {}),
    };
    await client.send(new CreateTableCommand(input));
    const ttl = p.TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined;
    if (ttl?.Enabled) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName,
          TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
        }),
      );
    }
  }
  return names;
}
