/**
 * The emulated deployment's meter: a known sequence of requests gives the
 * known counts. DynamoDB through the platform's own store adapter against DynamoDB Local behind the
 * metering pass-through (the request units DynamoDB reports, every request asking for them); S3
 * through the SDK against the S3 emulator (requests by price class, bytes stored); Lambda through
 * the emulated Lambda service (requests, billed GB-seconds at the configured memory, cold starts,
 * the peak memory; a durable execution's operations and the data its checkpoints wrote and keep,
 * checkpointed by AWS's own durable execution SDK). Fargate's figures are ECS's own answers summed (test/emulator/fargate-usage.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type DurableContext,
  DurableExecutionApiClient,
  withDurableExecution,
} from '@aws/durable-execution-sdk-js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { DeploymentMeter } from '../../functions/emulator/deployment-meter.ts';
import { DYNAMODB_LOCAL_CREDENTIALS, freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { LambdaApiEmulator } from '../../functions/emulator/lambda-api-emulator.ts';
import { LambdaHost } from '../../functions/emulator/lambda-host.ts';
import { MeteringProxy } from '../../functions/emulator/metering-proxy.ts';
import { S3Emulator } from '../../functions/emulator/s3-emulator.ts';
import type { StandingResources } from '../../functions/emulator/standing-resources.ts';
import { meterDynamoDb } from '../../functions/emulator/wire-metering.ts';
import { ConditionFailedError, cond } from '../../functions/ports/store.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { waitFor } from '../helpers/wait-for.ts';

const STANDING: StandingResources = {
  interfaceEndpointAzHours: 0,
  gatewayEndpoints: 0,
  natGateways: 0,
  applicationLoadBalancers: 0,
  networkLoadBalancers: 0,
  kmsKeys: 0,
  secrets: 0,
  alarms: 0,
  warmPoolFloor: { tasks: 0, vcpu: 1, memoryGb: 2, architecture: 'arm64', spot: false },
};

describe('the meter: DynamoDB request units from the store adapter’s requests', () => {
  let db: DynamoDbLocal;
  let proxy: MeteringProxy;
  let store: DynamoDbStore;
  let client: DynamoDBClient;
  const meter = new DeploymentMeter({ standing: STANDING });

  before(async () => {
    db = await startDynamoDbLocal('meter');
    proxy = new MeteringProxy(db.endpoint, meterDynamoDb(meter));
    client = new DynamoDBClient({
      endpoint: await proxy.listen(),
      region: 'us-east-1',
      credentials: DYNAMODB_LOCAL_CREDENTIALS,
    });
    store = new DynamoDbStore({ tableName: db.tableName, client });
  });
  after(async () => {
    client?.destroy();
    await proxy?.close();
    await db?.close();
  });

  it('counts what DynamoDB reports for each kind of request, and a refused condition apart', async () => {
    meter.reset();
    const key = { pk: 'WS#1', sk: 'ITEM#1' };
    await store.put({ ...key, n: 1 }); // 1 WRU: under 1 KB, no index attributes
    await store.get(key); // 1 RRU: a strongly consistent read under 4 KB
    await store.update(key, { set: { n: 2 } }); // 1 WRU
    await store.query({ pk: 'WS#1' }); // 1 RRU: consistent, under 4 KB
    await store.put({ pk: 'WS#1', sk: 'ITEM#2', gsi1pk: 'G', gsi1sk: 'S' }); // 2 WRU: the table and gsi1
    // 4 WRU: a transaction's writes cost twice.
    await store.transactWrite([{ put: { pk: 'WS#1', sk: 'ITEM#3' } }, { put: { pk: 'WS#1', sk: 'ITEM#4' } }]);
    await assert.rejects(store.put({ ...key, n: 3 }, { condition: cond.notExists() }), ConditionFailedError);
    await store.delete({ pk: 'WS#1', sk: 'ITEM#4' }); // 1 WRU
    const s = await meter.snapshot();
    assert.deepEqual(s.dynamodb.unmeteredRequests, {}, 'every request asked for its consumed capacity');
    assert.equal(s.dynamodb.readRequestUnits, 2);
    assert.equal(s.dynamodb.writeRequestUnits, 1 + 1 + 2 + 4 + 1);
    assert.equal(s.dynamodb.conditionFailures, 1);
    assert.equal(s.dynamodb.requests, 7);
    assert.deepEqual(s.dynamodb.byOperation.GetItem, { requests: 1, read: 1, write: 0 });
    assert.deepEqual(
      s.dynamodb.byOperation.PutItem,
      { requests: 2, read: 0, write: 3 },
      'the refused put apart',
    );
    assert.deepEqual(s.dynamodb.byOperation.TransactWriteItems, { requests: 1, read: 0, write: 4 });
  });
});

describe('the meter: S3 requests by price class and bytes stored', () => {
  let dir: string;
  let s3: S3Emulator;
  let client: S3Client;
  const meter = new DeploymentMeter({ standing: STANDING, storedBytes: () => s3.storedBytes() });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-meter-s3-'));
    s3 = new S3Emulator({
      directory: dir,
      host: '127.0.0.1',
      port: await freeLoopbackPort(),
      buckets: ['metered'],
      credentials: S3_EMULATOR_CREDENTIALS,
      onRequest: (method, path, query) => meter.s3Request(method, path, query),
    });
    client = new S3Client({
      region: 'us-east-1',
      endpoint: await s3.listen(),
      forcePathStyle: true,
      credentials: S3_EMULATOR_CREDENTIALS,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
  });
  after(async () => {
    client?.destroy();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('PUT and LIST are tier 1, GET and HEAD tier 2, DELETE free; the objects’ bytes are stored', async () => {
    meter.reset();
    await client.send(new PutObjectCommand({ Bucket: 'metered', Key: 'a/one', Body: 'x'.repeat(1000) }));
    await client.send(new PutObjectCommand({ Bucket: 'metered', Key: 'a/two', Body: 'y'.repeat(500) }));
    await (
      await client.send(new GetObjectCommand({ Bucket: 'metered', Key: 'a/one' }))
    ).Body?.transformToString();
    await client.send(new HeadObjectCommand({ Bucket: 'metered', Key: 'a/two' }));
    await client.send(new ListObjectsV2Command({ Bucket: 'metered', Prefix: 'a/' }));
    await client.send(new DeleteObjectCommand({ Bucket: 'metered', Key: 'a/two' }));
    const s = await meter.snapshot();
    assert.deepEqual({ ...s.s3 }, { tier1Requests: 3, tier2Requests: 2, freeRequests: 1, storedBytes: 1000 });
  });
});

describe('the meter: Lambda invocations as the REPORT line bills them', () => {
  let dir: string;
  let host: LambdaHost;
  const meter = new DeploymentMeter({ standing: STANDING });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-meter-lambda-'));
    // Holds about 40 MB while it waits 50 ms, so the peak is seen above the runtime's own.
    await writeFile(
      join(dir, 'index.mjs'),
      'export const handler = async () => { const held = Buffer.alloc(40 * 1024 * 1024, 1); await new Promise((r) => setTimeout(r, 50)); return held.length; };\n',
    );
    host = new LambdaHost(
      [
        {
          name: 'metered',
          logName: 'Metered',
          arn: 'arn:aws:lambda:us-east-1:000000000000:function:metered',
          assetDir: dir,
          handler: 'index.handler',
          timeoutSeconds: 10,
          memoryMb: 512,
          architecture: 'arm64',
          environment: { PATH: process.env.PATH ?? '' },
          maxInstances: 1,
        },
      ],
      () => undefined,
      (r) =>
        meter.lambdaInvocation({
          name: r.fn.logName,
          memoryMb: r.fn.memoryMb,
          architecture: r.fn.architecture ?? 'x86_64',
          durationMs: r.durationMs,
          initMs: r.initMs,
          maxMemoryUsedMb: r.maxMemoryUsedMb,
        }),
    );
  });
  after(async () => {
    await host?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts requests and one cold start, bills whole milliseconds at the configured memory, keeps the peak', async () => {
    meter.reset();
    await host.invoke('metered', {});
    await host.invoke('metered', {});
    const u = (await meter.snapshot()).lambda.Metered;
    assert.ok(u, 'the function was metered');
    assert.equal(u.requests, 2);
    assert.equal(u.coldStarts, 1);
    assert.equal(u.memoryMb, 512);
    assert.equal(u.architecture, 'arm64');
    assert.ok(Number.isInteger(u.billedMs), 'billed in whole milliseconds');
    assert.ok(u.billedMs >= 100, `two invocations of at least 50 ms each: ${u.billedMs}`);
    assert.ok(Math.abs(u.gbSeconds - (u.billedMs / 1000) * 0.5) < 1e-9, 'GB-s at 512 MB');
    assert.ok(u.maxMemoryUsedMb >= 40, `the peak includes the 40 MB held: ${u.maxMemoryUsedMb}`);
  });
});

describe('the meter: a durable execution’s operations, data written and data retained', () => {
  let emulator: LambdaApiEmulator;
  let endpoint = '';
  const meter = new DeploymentMeter({ standing: STANDING });
  const credentials = { accessKeyId: 'AKIDEMULATED', secretAccessKey: 'emulated' };
  const input = { x: 4 };
  let handler: (e: unknown, c: unknown) => Promise<unknown>;

  before(async () => {
    emulator = new LambdaApiEmulator({
      durableConfig: (name) => (name === 'worker' ? { timeoutSeconds: 60, retentionDays: 1 } : undefined),
      durableRetryDelayMs: 10,
      durableUsage: (usage) => meter.durableUsage(usage),
      invoke: async (_name, payload) =>
        handler(payload, { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 }),
    });
    endpoint = await emulator.listen(0, '127.0.0.1');
    const client = new LambdaClient({ region: 'us-east-1', credentials, endpoint });
    handler = withDurableExecution(
      async (event: { x: number }, ctx: DurableContext) => {
        const a = await ctx.step('a', async () => ({ text: 'y'.repeat(100), n: event.x }));
        await ctx.wait('pause', { seconds: 1 });
        const b = await ctx.step('b', async () => 'z'.repeat(1000));
        return { a: a.n, b: b.length };
      },
      { durableExecutionClient: new DurableExecutionApiClient(client) },
    ) as (e: unknown, c: unknown) => Promise<unknown>;
  });
  after(() => emulator.close());

  it('counts the start, each step and the wait as operations, the payloads written, and their retention', async () => {
    meter.reset();
    const client = new LambdaClient({ region: 'us-east-1', credentials, endpoint });
    const started = await client.send(
      new InvokeCommand({
        FunctionName: 'worker',
        Qualifier: 'live',
        InvocationType: 'Event',
        Payload: Buffer.from(JSON.stringify(input)),
      }),
    );
    const execution = emulator.executions.get(started.DurableExecutionArn ?? '');
    const ending = await waitFor('the execution to end', () => execution?.ending, 15_000);
    assert.equal(ending.status, 'SUCCEEDED', JSON.stringify(ending));
    const d = (await meter.snapshot()).durable;
    assert.equal(d.executionsStarted, 1);
    assert.equal(d.executionsEnded, 1);
    assert.equal(d.operations, 4, 'the execution’s start, step a, the wait, step b');
    // The input and the two steps' results, as the SDK serialized them (JSON).
    const written =
      Buffer.byteLength(JSON.stringify(input)) +
      Buffer.byteLength(JSON.stringify({ text: 'y'.repeat(100), n: 4 })) +
      Buffer.byteLength(JSON.stringify('z'.repeat(1000)));
    assert.equal(d.bytesWritten, written);
    // Kept a day after the end (the function's retention), plus the seconds the execution lasted.
    assert.ok(d.retainedByteSeconds >= written * 86_400, `${d.retainedByteSeconds}`);
    assert.ok(d.retainedByteSeconds < written * (86_400 + 15), `${d.retainedByteSeconds}`);
  });
});
