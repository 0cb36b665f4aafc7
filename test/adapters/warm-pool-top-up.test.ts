import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECSClient, RunTaskCommand } from '@aws-sdk/client-ecs';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import { IDLE_WAIT_BOUNDS } from '../../functions/adapters/aws/runner-idle-wait.ts';
import { WarmRunnerPool } from '../../functions/adapters/aws/warm-runner-pool.ts';
import {
  type PoolManifest,
  type RunnerClaim,
  SANDBOX_MANIFEST_ENV,
} from '../../functions/containers/sandbox-protocol.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
} from '../../functions/emulator/dynamodb-local.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../functions/ports/sandbox.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';

/**
 * EcsSandbox.prepare (issue 35, point 2): what housekeeping calls on its schedule to keep the warm
 * runner pool at its floor while no run comes. ECS and S3 are the SDK's own mocks (control planes
 * with no local engine); the pool's records are on DynamoDB Local.
 */

const ecsMock = mockClient(ECSClient);
const s3Mock = mockClient(S3Client);

describe('EcsSandbox.prepare: the warm runner pool topped up to its floor', () => {
  let dynamo: DynamoDbLocal;
  let client: DynamoDBClient;
  let pool: WarmRunnerPool;
  const objects = new Map<string, string>();
  let tasks = 0;

  before(async () => {
    dynamo = await startDynamoDbLocal('agenthost-pool-top-up');
    client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: DYNAMODB_LOCAL_REGION,
      credentials: DYNAMODB_LOCAL_CREDENTIALS,
    });
  });
  after(async () => {
    client?.destroy();
    await dynamo?.close();
  });
  beforeEach(async () => {
    ecsMock.reset();
    s3Mock.reset();
    objects.clear();
    s3Mock.on(PutObjectCommand).callsFake((input: { Key: string; Body: Buffer }) => {
      objects.set(input.Key, String(input.Body));
      return {};
    });
    ecsMock.on(RunTaskCommand).callsFake(() => ({
      tasks: [{ taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/agenthost-sandbox/t${++tasks}` }],
      failures: [],
    }));
    pool = new WarmRunnerPool({
      doc: DynamoDBDocumentClient.from(client),
      tableName: dynamo.tableName,
      floor: 2,
      ceiling: 3,
    });
    for (const r of await pool.list()) await pool.remove(r);
  });

  const sandbox = (credentialsEnd?: number) =>
    new EcsSandbox({
      cluster: 'agenthost-sandbox',
      taskDefinition: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/AgenthostSandbox:7',
      subnets: ['subnet-a'],
      securityGroups: ['sg-1'],
      bucket: 'agenthost-bundles',
      region: 'eu-west-1',
      ecs: new ECSClient({ region: 'eu-west-1' }),
      s3: new S3Client({ region: 'eu-west-1' }),
      presign: Object.assign(
        async (method: string, key: string) => `https://signed.example/${method}/${key}`,
        {
          credentialsExpireAt: async () => credentialsEnd,
        },
      ),
      runnerSource: 'module.exports = {}',
      warm: { pool, idleMs: 600_000, boundIdle: IDLE_WAIT_BOUNDS, claimSlots: 5, lifetimeMs: 3_000_000 },
    });

  test('starts the floor of unbound runners with their pool manifests, then nothing while the floor holds', async () => {
    assert.equal(await sandbox().prepare(), 2);
    const runs = ecsMock.commandCalls(RunTaskCommand).map((c) => c.args[0].input);
    assert.equal(runs.length, 2);
    for (const input of runs) {
      assert.equal(input.startedBy, 'agenthost-warm-pool');
      assert.equal(input.networkConfiguration?.awsvpcConfiguration?.assignPublicIp, 'DISABLED');
      const env = input.overrides?.containerOverrides?.[0]?.environment?.[0];
      assert.equal(env?.name, SANDBOX_MANIFEST_ENV);
      const key = String(env?.value).replace('https://signed.example/GET/', '');
      const manifest = JSON.parse(objects.get(key) ?? '{}') as PoolManifest;
      assert.equal(manifest.v, 3);
      assert.equal(manifest.claims.length, 5);
      assert.deepEqual(manifest.scratchDirs, ['/tmp']);
      assert.ok(!JSON.stringify(input).includes('workspace'), 'an unbound runner names no workspace');
    }
    const records = await pool.list();
    assert.deepEqual(
      records.map((r) => [r.status, r.binding]),
      [
        ['idle', ''],
        ['idle', ''],
      ],
    );
    assert.equal(await sandbox().prepare(), 0, 'the floor holds');
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 2);
  });

  test('within the ceiling: busy runners leave room for fewer', async () => {
    await pool.add({
      runnerId: 'busy-1',
      taskArn: 'arn:t/busy-1',
      binding: 'ws_a|agv_1',
      status: 'busy',
      nextClaim: 2,
      claimSlots: 5,
      usableUntil: Date.now() + 600_000,
      startedAt: Date.now(),
    });
    await pool.add({
      runnerId: 'busy-2',
      taskArn: 'arn:t/busy-2',
      binding: 'ws_b|agv_1',
      status: 'busy',
      nextClaim: 2,
      claimSlots: 5,
      usableUntil: Date.now() + 600_000,
      startedAt: Date.now(),
    });
    assert.equal(await sandbox().prepare(), 1, 'three in all at most');
  });

  test('a runner waits for no claim past its signer’s credentials; none is started with too little left', async () => {
    const now = Date.now();
    assert.equal(await sandbox(now + 3 * 60_000).prepare(), 0, 'three minutes left: not worth a start');
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 0);
    assert.equal(await sandbox(now + 20 * 60_000).prepare(), 2);
    const key = String(
      ecsMock.commandCalls(RunTaskCommand)[0]?.args[0].input.overrides?.containerOverrides?.[0]
        ?.environment?.[0]?.value,
    ).replace('https://signed.example/GET/', '');
    const manifest = JSON.parse(objects.get(key) ?? '{}') as PoolManifest;
    assert.ok(manifest.expiresAtMs <= now + 18 * 60_000 + 1000, 'two minutes before the credentials end');
    assert.ok(manifest.expiresAtMs > now + 17 * 60_000);
    for (const r of await pool.list()) assert.ok(r.usableUntil <= manifest.expiresAtMs);
  });

  test('a session claims a runner: the run goes into its claim slot, no runner or run manifest of its own; released at close', async () => {
    s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      if (!/^sandbox-results\/run-w1\/exec-1\.json$/.test(input.Key)) {
        throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
      }
      const body = JSON.stringify({
        v: 1,
        exitCode: 0,
        signal: null,
        stdout: 'ok\n',
        stdoutTruncated: false,
        stderrTail: '',
        timedOut: false,
        durationMs: 3,
      });
      return { Body: { transformToString: async () => body }, ContentLength: body.length };
    });
    s3Mock.on(DeleteObjectsCommand).resolves({});
    const session = await sandbox().openSession({
      runId: 'run-w1',
      workspaceId: 'ws_agent',
      reuseScope: { workspaceId: 'ws_caller', agentVersion: 'agv_7' },
      env: { TOKEN: 'secret-in-the-claim' },
      network: 'none',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 30_000,
    });
    assert.equal((await session.exec('echo ok')).stdout, 'ok\n');
    await session.close();
    const keys = [...objects.keys()];
    assert.ok(!keys.includes('sandbox-inputs/run-w1/runner.cjs'), 'no runner of its own');
    assert.ok(!keys.includes('sandbox-inputs/run-w1/run.json'), 'no run manifest of its own');
    const claimKey = keys.find((k) => /^sandbox-inputs\/pool\/wr-[0-9a-f]+\/claim-1\.json$/.test(k));
    assert.ok(claimKey, keys.join(' '));
    const claim = JSON.parse(objects.get(claimKey) ?? '{}') as RunnerClaim;
    assert.deepEqual(claim.binding, { workspaceId: 'ws_caller', agentVersion: 'agv_7' });
    assert.equal(claim.run.runId, 'run-w1');
    // The claim holds the run's secrets: deleted with the run's objects at close.
    const deleted = s3Mock
      .commandCalls(DeleteObjectsCommand)
      .flatMap((c) => c.args[0].input.Delete?.Objects?.map((o) => o.Key) ?? []);
    assert.ok(deleted.includes(claimKey), 'the claim is deleted at close');
    assert.ok(!deleted.some((k) => k?.endsWith('/pool.json')), 'the runner’s own objects stay');
    const bound = (await pool.list()).filter((r) => r.binding === 'ws_caller|agv_7');
    assert.deepEqual(
      bound.map((r) => [r.status, r.nextClaim]),
      [['idle', 2]],
      'released for the pair’s next run',
    );
  });

  test('a RunTask that ECS refuses is not recorded', async () => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:ENI' }] });
    assert.equal(await sandbox().prepare(), 0);
    assert.deepEqual(await pool.list(), []);
  });
});
