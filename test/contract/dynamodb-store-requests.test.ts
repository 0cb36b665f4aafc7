/**
 * The DynamoDB Store adapter's requests, on a mocked document client: the exact TransactWriteItems it
 * builds, how cancellations map to named ops, and its put of an expired item's replacement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { ConditionFailedError, cond, TransactionCanceledError } from '../../functions/ports/store.ts';
import { rejectsWith } from './store-contract.ts';

describe('DynamoDbStore requests (mocked client)', () => {
  const NOW = 1_750_000_000;
  const TableName = 'agenthost';
  // aws-sdk-client-mock replaces DynamoDBDocumentClient.prototype.send, for the whole process: created in `before`
  // (not when the file loads) and restored in `after`, so it holds for this suite only.
  const mockDocumentClient = () => mockClient(DynamoDBDocumentClient);
  let docMock: ReturnType<typeof mockDocumentClient>;
  let store: DynamoDbStore;

  before(() => {
    docMock = mockDocumentClient();
    store = new DynamoDbStore({
      tableName: TableName,
      client: new DynamoDBClient({
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      }),
      nowSeconds: () => NOW,
    });
  });
  after(async () => {
    docMock.restore();
    await store.close();
  });

  const transaction = () => [
    {
      name: 'key',
      put: { pk: 'ACCOUNT#1', sk: 'KEY#new', name: 'ci', scopes: ['read'] },
      condition: cond.notExists(),
    },
    {
      name: 'meta',
      update: { pk: 'ACCOUNT#1', sk: 'META' },
      spec: { set: { updated_at: '2026-01-01' }, add: { key_count: 1 } },
      condition: cond.lt('key_count', 10),
    },
    { name: 'old key', delete: { pk: 'ACCOUNT#1', sk: 'KEY#old' } },
    { name: 'profile', check: { pk: 'ACCOUNT#1', sk: 'PROFILE' }, condition: cond.exists() },
  ];

  const expectedInput = (): TransactWriteCommandInput => ({
    TransactItems: [
      {
        Put: {
          TableName,
          Item: { pk: 'ACCOUNT#1', sk: 'KEY#new', name: 'ci', scopes: ['read'] },
          ConditionExpression: 'attribute_not_exists(#pk) OR #ttl <= :now',
          ExpressionAttributeNames: { '#pk': 'pk', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
      {
        Update: {
          TableName,
          Key: { pk: 'ACCOUNT#1', sk: 'META' },
          UpdateExpression: 'SET #updated_at = :v0 ADD #key_count :v1',
          ConditionExpression: '#key_count < :v2 AND NOT (#ttl <= :now)',
          ExpressionAttributeNames: { '#updated_at': 'updated_at', '#key_count': 'key_count', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':v0': '2026-01-01', ':v1': 1, ':v2': 10, ':now': NOW },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      { Delete: { TableName, Key: { pk: 'ACCOUNT#1', sk: 'KEY#old' } } },
      {
        ConditionCheck: {
          TableName,
          Key: { pk: 'ACCOUNT#1', sk: 'PROFILE' },
          ConditionExpression: 'attribute_exists(#pk) AND NOT (#ttl <= :now)',
          ExpressionAttributeNames: { '#pk': 'pk', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
    ],
  });

  const cancelled = (reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
    new TransactionCanceledException({
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      $metadata: {},
      CancellationReasons: reasons.map((r) => ({ ...r, Message: r.Code === 'None' ? undefined : 'failed' })),
    } as ConstructorParameters<typeof TransactionCanceledException>[0]);

  it('builds the exact TransactWriteItems request for put(notExists) + update(add) + delete + check', async () => {
    docMock.reset();
    docMock.on(TransactWriteCommand).resolves({});
    await store.transactWrite(transaction());
    const calls = docMock.commandCalls(TransactWriteCommand);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.args[0].input, expectedInput());
  });

  it('maps TransactionCanceledException to TransactionCanceledError with the named ops’ codes', async () => {
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejects(
        cancelled([
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed' },
          { Code: 'None' },
          { Code: 'TransactionConflict' },
        ]),
      );
    await assert.rejects(store.transactWrite(transaction()), (err: unknown) => {
      assert.ok(err instanceof TransactionCanceledError);
      assert.deepEqual(err.failed, { meta: 'ConditionalCheckFailed', profile: 'TransactionConflict' });
      return true;
    });
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1, 'not retried');
  });

  it('retries an unconditional update whose target had expired as a put of a fresh item', async () => {
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejectsOnce(
        cancelled([
          {
            Code: 'ConditionalCheckFailed',
            Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' }, ttl: { N: '100' } },
          },
          { Code: 'None' },
        ]),
      )
      .resolves({});
    await store.transactWrite([
      { update: { pk: 'W', sk: 'hits' }, spec: { add: { n: 1 }, set: { ttl: NOW + 60 } } },
      { put: { pk: 'W', sk: 'log', v: 1 } },
    ]);
    const calls = docMock.commandCalls(TransactWriteCommand);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.args[0].input.TransactItems, [
      {
        Put: {
          TableName,
          Item: { pk: 'W', sk: 'hits', n: 1, ttl: NOW + 60 },
          ConditionExpression: '#ttl <= :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
      { Put: { TableName, Item: { pk: 'W', sk: 'log', v: 1 } } },
    ]);

    // With a condition that fails on an absent item (lt on a missing attribute), expiry does not help.
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejects(
        cancelled([
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed', Item: { ttl: { N: '100' } } },
          { Code: 'None' },
          { Code: 'None' },
        ]),
      );
    await assert.rejects(
      store.transactWrite(transaction()),
      (err: unknown) => err instanceof TransactionCanceledError && err.conditionFailed('meta'),
    );
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1);
  });

  it('replaces an expired item on update when DynamoDB returns it with the failed condition', async () => {
    docMock.reset();
    docMock.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' }, ttl: { N: String(NOW - 5) } },
      }),
    );
    docMock.on(PutCommand).resolves({});
    assert.equal(await store.atomicAdd({ pk: 'W', sk: 'hits' }, 'n', 1, { ttl: NOW + 60 }), 1);
    assert.deepEqual(docMock.commandCalls(UpdateCommand)[0]?.args[0].input, {
      TableName,
      Key: { pk: 'W', sk: 'hits' },
      UpdateExpression: 'SET #ttl = :v0 ADD #n :v1',
      ConditionExpression: 'NOT (#ttl <= :now)',
      ExpressionAttributeNames: { '#ttl': 'ttl', '#n': 'n' },
      ExpressionAttributeValues: { ':v0': NOW + 60, ':v1': 1, ':now': NOW },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    assert.deepEqual(docMock.commandCalls(PutCommand)[0]?.args[0].input, {
      TableName,
      Item: { pk: 'W', sk: 'hits', n: 1, ttl: NOW + 60 },
      ConditionExpression: '#ttl <= :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':now': NOW },
    });

    // A live item returned with the failure: the caller's condition failed.
    docMock.reset();
    docMock.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { pk: { S: 'W' }, sk: { S: 'hits' }, n: { N: '7' } },
      }),
    );
    await assert.rejects(
      store.atomicAdd({ pk: 'W', sk: 'hits' }, 'n', 1, { condition: cond.lt('n', 5) }),
      rejectsWith(ConditionFailedError),
    );
    assert.equal(docMock.commandCalls(PutCommand).length, 0);
  });

  it('lets every other error through unchanged (transient ones: test/adapters/dynamodb-transient-retry.test.ts)', async () => {
    const invalid = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
    });
    docMock.reset();
    docMock.on(TransactWriteCommand).rejects(invalid);
    docMock.on(PutCommand).rejects(invalid);
    docMock.on(UpdateCommand).rejects(invalid);
    await assert.rejects(store.transactWrite(transaction()), (err) => err === invalid);
    await assert.rejects(
      store.put({ pk: 'a', sk: 'b' }, { condition: cond.notExists() }),
      (err) => err === invalid,
    );
    await assert.rejects(store.atomicAdd({ pk: 'a', sk: 'b' }, 'n', 1), (err) => err === invalid);
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1, 'not retried');
  });
});
