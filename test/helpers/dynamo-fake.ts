import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { tableDefinition } from '../../functions/adapters/aws/dynamodb-store.ts';

/**
 * DynamoDB on loopback for tests: dynalite, fronted by a proxy that adds the one operation dynalite
 * lacks, TransactWriteItems, speaking DynamoDB's JSON wire protocol. Transactions are serialised
 * in the proxy; each op is applied with its own condition, and on the first failed condition every
 * applied op is undone and TransactionCanceledException is answered with CancellationReasons, as
 * DynamoDB does. (Not atomic against concurrent single-item writes: a test fake, not a database.)
 */
export interface DynamoFake {
  endpoint: string;
  tableName: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startDynamoFake(tableName = 'agenthost-test'): Promise<DynamoFake> {
  const backend = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', () => resolve()));
  const backendPort = (backend.address() as AddressInfo).port;
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${backendPort}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  await client.send(new CreateTableCommand(tableDefinition(tableName)));

  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const proxy: Server = createServer(async (req, res) => {
    const body = await readAll(req);
    if (req.headers['x-amz-target'] === 'DynamoDB_20120810.TransactWriteItems') {
      const input = JSON.parse(body.toString('utf8')) as { TransactItems: TransactWriteItem[] };
      const result = await serialised(() => transact(client, input.TransactItems));
      res.writeHead(result.status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(result.body));
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 500, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    endpoint,
    tableName,
    env: {
      PLATFORM_MODE: 'aws',
      PLATFORM_TABLE_NAME: tableName,
      PLATFORM_BUNDLE_BUCKET: 'agenthost-test-bundles',
      PLATFORM_DYNAMODB_ENDPOINT: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
    async close() {
      client.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    },
  };
}

type Key = Record<string, AttributeValue>;

async function transact(
  client: DynamoDBClient,
  items: TransactWriteItem[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  const undo: { table: string; key: Key; before: Key | undefined }[] = [];
  for (let i = 0; i < items.length; i++) {
    const op = items[i] as TransactWriteItem;
    const target = op.Put ?? op.Update ?? op.Delete ?? op.ConditionCheck;
    if (!target?.TableName) return { status: 400, body: validation('Each TransactItem needs one operation') };
    const key: Key = op.Put
      ? pickKey(op.Put.Item as Key)
      : ((op.Update?.Key ?? op.Delete?.Key ?? op.ConditionCheck?.Key) as Key);
    const before = (
      await client.send(new GetItemCommand({ TableName: target.TableName, Key: key, ConsistentRead: true }))
    ).Item;
    try {
      if (op.Put) await client.send(new PutItemCommand(op.Put));
      else if (op.Update) await client.send(new UpdateItemCommand(op.Update));
      else if (op.Delete) await client.send(new DeleteItemCommand(op.Delete));
      else if (op.ConditionCheck) {
        // A no-op write guarded by the condition; undone below whatever it did to a missing item.
        await client.send(
          new UpdateItemCommand({
            TableName: op.ConditionCheck.TableName,
            Key: key,
            ConditionExpression: op.ConditionCheck.ConditionExpression,
            ExpressionAttributeNames: { ...op.ConditionCheck.ExpressionAttributeNames, '#txnoop': 'txnoop' },
            ExpressionAttributeValues: op.ConditionCheck.ExpressionAttributeValues,
            UpdateExpression: 'REMOVE #txnoop',
          }),
        );
      }
      undo.push({ table: target.TableName, key, before });
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      undo.push({ table: target.TableName, key, before });
      for (const u of undo.reverse()) {
        if (u.before) await client.send(new PutItemCommand({ TableName: u.table, Item: u.before }));
        else await client.send(new DeleteItemCommand({ TableName: u.table, Key: u.key }));
      }
      // As DynamoDB: the failed op's reason carries the item when the op asked for ALL_OLD.
      const wantsItem = target.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && before !== undefined;
      const reasons = items.map((_, j) =>
        j === i
          ? {
              Code: 'ConditionalCheckFailed',
              Message: 'The conditional request failed',
              ...(wantsItem ? { Item: before } : {}),
            }
          : { Code: 'None' },
      );
      return {
        status: 400,
        body: {
          __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
          message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
          CancellationReasons: reasons,
        },
      };
    }
  }
  return { status: 200, body: {} };
}

function pickKey(item: Key): Key {
  return { pk: item.pk as AttributeValue, sk: item.sk as AttributeValue };
}

function validation(message: string) {
  return { __type: 'com.amazon.coral.validate#ValidationException', message };
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
