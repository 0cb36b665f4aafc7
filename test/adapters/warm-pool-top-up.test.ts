import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import { IDLE_WAIT_BOUNDS } from '../../functions/adapters/aws/runner-idle-wait.ts';
import { WarmRunnerPool } from '../../functions/adapters/aws/warm-runner-pool.ts';
import {
  type PoolManifest,
  RUNNER_PROTOCOL,
  type RunnerClaim,
  SANDBOX_MANIFEST_ENV,
} from '../../functions/containers/sandbox-protocol.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
} from '../../functions/emulator/dynamodb-local.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../functions/ports/sandbox.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';
import { taskEnvironment } from '../helpers/task-environment.ts';

/**
 * EcsSandbox.prepare: what housekeeping calls on its schedule to keep the warm
 * runner pool at its floor while no run comes; and a session's claim of a runner, its release, and
 * its handover when the runner it claimed had already gone. ECS and S3 are the SDK's own mocks
 * (control planes with no local engine); the pool's records are on DynamoDB Local.
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

  const sandbox = (credentialsEnd?: number, describeMs?: number) =>
    new EcsSandbox({
      ...(describeMs === undefined ? {} : { describeMs }),
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
      // The pool manifest's URL reaches every claim: RunTask names only the env file holding it.
      assert.ok(!JSON.stringify(input).includes('https://'), JSON.stringify(input));
      const url = taskEnvironment(input, (k) => objects.get(k))[SANDBOX_MANIFEST_ENV];
      const key = String(url).replace('https://signed.example/GET/', '');
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
    // The only tasks started are the pool's refill to its floor of unbound runners.
    assert.equal(
      ecsMock.commandCalls(RunTaskCommand).length,
      (await pool.list()).filter((r) => r.binding === '').length,
    );
    assert.equal(await sandbox(now + 20 * 60_000).prepare(), 2);
    const key = String(
      taskEnvironment(ecsMock.commandCalls(RunTaskCommand)[0]?.args[0].input, (k) => objects.get(k))[
        SANDBOX_MANIFEST_ENV
      ],
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

  const okResult = JSON.stringify({
    v: 1,
    exitCode: 0,
    signal: null,
    stdout: 'ok\n',
    stdoutTruncated: false,
    stderrTail: '',
    timedOut: false,
    durationMs: 3,
  });
  const claimOf = (key: string) => JSON.parse(objects.get(key) ?? '{}') as RunnerClaim;
  const claimKeys = () =>
    [...objects.keys()].filter((k) => /^sandbox-inputs\/pool\/wr-[0-9a-f]+\/claim-\d+\.json$/.test(k));

  test('a runner that ended the run at its last command is recorded as waiting from its upload, not from when the session read the result', async () => {
    // The result was read 20 s after S3 took it (a loaded Lambda, a slow poll): the runner has
    // been waiting for its next claim since its upload, so the record must not say later.
    const uploadedAt = new Date(Math.floor((Date.now() - 20_000) / 1000) * 1000);
    s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      if (input.Key !== 'sandbox-results/run-w2/exec-1.json') {
        throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
      }
      return {
        Body: { transformToString: async () => okResult },
        ContentLength: okResult.length,
        LastModified: uploadedAt,
      };
    });
    s3Mock.on(DeleteObjectsCommand).resolves({});
    const session = await sandbox().openSession({
      runId: 'run-w2',
      workspaceId: 'ws_agent',
      reuseScope: { workspaceId: 'ws_caller', agentVersion: 'agv_8' },
      env: {},
      network: 'none',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 30_000,
    });
    assert.equal((await session.exec('echo ok', { last: true })).stdout, 'ok\n');
    await session.close();
    const [key] = claimKeys();
    assert.ok(key);
    const { idleMs } = claimOf(key);
    assert.ok(idleMs && idleMs > 20_000 + 10_000, `a wait long enough to keep: ${idleMs}`);
    const [record] = (await pool.list()).filter((r) => r.binding === 'ws_caller|agv_8');
    assert.equal(record?.status, 'idle');
    assert.equal(record?.usableUntil, uploadedAt.getTime() + idleMs, 'its wait counted from the upload');
  });

  test('a claimed runner that exited idle before reading its claim: the run is placed again, on another runner, and answered', async () => {
    // Two idle runners of the pair: the run claims one, which has already given up waiting (its
    // task stops with status 0 and no result); the run must go to the other, not fail.
    const now = Date.now();
    for (const id of ['wr-aaaa01', 'wr-aaaa02']) {
      await pool.add({
        runnerId: id,
        taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/agenthost-sandbox/${id}`,
        binding: 'ws_caller|agv_9',
        status: 'idle',
        nextClaim: 2,
        claimSlots: 5,
        usableUntil: now + 120_000,
        startedAt: now - 60_000,
        expiresAt: now + 600_000,
        protocol: RUNNER_PROTOCOL,
        cpu: 256,
        memory: 1024,
      });
    }
    let gone: string | undefined;
    s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      // The first claim found no runner; the result appears once a second claim is written.
      const claims = claimKeys();
      if (input.Key === 'sandbox-results/run-w3/exec-1.json' && claims.length === 2) {
        return { Body: { transformToString: async () => okResult }, ContentLength: okResult.length };
      }
      throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
    });
    ecsMock.on(DescribeTasksCommand).callsFake((input: { tasks: string[] }) => {
      const arn = input.tasks[0] as string;
      gone ??= arn;
      return {
        tasks: [
          arn === gone
            ? {
                taskArn: arn,
                lastStatus: 'STOPPED',
                stopCode: 'EssentialContainerExited',
                containers: [{ name: 'sandbox', exitCode: 0 }],
              }
            : { taskArn: arn, lastStatus: 'RUNNING' },
        ],
      };
    });
    ecsMock.on(StopTaskCommand).resolves({});
    s3Mock.on(DeleteObjectsCommand).resolves({});
    const session = await sandbox(undefined, 50).openSession({
      runId: 'run-w3',
      workspaceId: 'ws_agent',
      reuseScope: { workspaceId: 'ws_caller', agentVersion: 'agv_9' },
      env: {},
      network: 'none',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 30_000,
    });
    assert.equal((await session.exec('echo ok', { last: true })).stdout, 'ok\n');
    await session.close();
    const claims = claimKeys();
    assert.equal(claims.length, 2, claims.join(' '));
    assert.deepEqual(
      claims.map((k) => claimOf(k).run.runId),
      ['run-w3', 'run-w3'],
    );
    const records = (await pool.list()).filter((r) => r.binding === 'ws_caller|agv_9');
    assert.ok(gone);
    assert.ok(!records.some((r) => r.taskArn === gone), 'the runner that exited is forgotten');
    assert.deepEqual(
      records.map((r) => r.runnerId),
      [gone.endsWith('wr-aaaa01') ? 'wr-aaaa02' : 'wr-aaaa01'],
      'the run went to the other runner of its pair; no task of its own was started',
    );
    // The only tasks started are the pool's refill to its floor of unbound runners.
    assert.equal(
      ecsMock.commandCalls(RunTaskCommand).length,
      (await pool.list()).filter((r) => r.binding === '').length,
    );
  });

  test('a RunTask that ECS refuses is not recorded', async () => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:ENI' }] });
    assert.equal(await sandbox().prepare(), 0);
    assert.deepEqual(await pool.list(), []);
  });
});
