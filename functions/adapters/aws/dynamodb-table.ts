import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { IndexName } from '../../ports/store.ts';
import { TABLE_SCHEMA } from './table-schema.ts';

/*
 * The DynamoDB table the Store lives in: its key and index attribute names (from the one shared
 * TABLE_SCHEMA) and its CreateTable definition.
 */

/** The table's key attributes, TTL attribute and indexes, from the one shared definition. */
export const PARTITION_KEY = TABLE_SCHEMA.partitionKey;
export const SORT_KEY = TABLE_SCHEMA.sortKey;
export const TTL_ATTRIBUTE = TABLE_SCHEMA.ttlAttribute;
const [gsi1, gsi2] = TABLE_SCHEMA.indexes;
export const GSI1 = { indexName: gsi1.name, partitionKey: gsi1.partitionKey, sortKey: gsi1.sortKey } as const;
export const GSI2 = { indexName: gsi2.name, partitionKey: gsi2.partitionKey, sortKey: gsi2.sortKey } as const;
export const GLOBAL_SECONDARY_INDEXES = [GSI1, GSI2] as const;

export const INDEXES: Record<IndexName, { partitionKey: string; sortKey: string }> = {
  gsi1: GSI1,
  gsi2: GSI2,
};
export const KEY_ATTRIBUTES = new Set<string>([PARTITION_KEY, SORT_KEY]);

/**
 * The table as CreateTable wants it (on-demand billing). TTL is not part of CreateTable: enable it
 * on `TTL_ATTRIBUTE` separately (the CDK stack sets `timeToLiveAttribute`).
 */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  const keys = [
    PARTITION_KEY,
    SORT_KEY,
    ...GLOBAL_SECONDARY_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keys.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => ({
      IndexName: i.indexName,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
}
