import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECSClient, RunTaskCommand, type RunTaskCommandInput, StopTaskCommand } from '@aws-sdk/client-ecs';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { SessionContext, WarmRunners } from '../../functions/adapters/aws/ecs-sandbox-options.ts';
import { leaseWarmRunner, topUpPool } from '../../functions/adapters/aws/ecs-sandbox-warm.ts';
import { DEFAULT_RUNNER_SIZE } from '../../functions/adapters/aws/fargate-size.ts';
import { IDLE_WAIT_BOUNDS } from '../../functions/adapters/aws/runner-idle-wait.ts';
import { WarmRunnerPool } from '../../functions/adapters/aws/warm-runner-pool.ts';
import type { RunManifest, RunnerClaim } from '../../functions/containers/sandbox-protocol.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
} from '../../functions/emulator/dynamodb-local.ts';
import { SandboxCapacityError } from '../../functions/ports/sandbox.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';

/**
 * Runners by demand (docs/sandbox-aws.md) in the adapter: every task a run starts counts against the
 * pool's ceiling; past it, or past the account's Fargate vCPU quota (RunTask's failure as ECS words
 * it), a run stops an idle runner of another pair to make room, or waits within its deadline and
 * then fails with a SandboxCapacityError naming the cause (503 with Retry-After at the edge); each
 * run is sized as its agent declares; the unbound floor goes to Fargate Spot with an on-demand
 * fallback. ECS and S3 are the SDK's mocks (control planes with no local engine); the pool's records
 * are on DynamoDB Local.
 */

const ecsMock = mockClient(ECSClient);
const s3Mock = mockClient(S3Client);
const VCPU_LIMIT = 'You’ve reached the limit on the number of vCPUs you can run concurrently';
const alpha = { workspaceId: 'ws_alpha', agentVersion: 'agv_1' };
const bravo = { workspaceId: 'ws_bravo', agentVersion: 'agv_1' };

describe('sandbox runners by demand: the ceiling, the quota, sizes and Spot', () => {
  let dynamo: DynamoDbLocal;
  let client: DynamoDBClient;
  const objects = new Map<string, string>();
  let tasks = 0;
  let refuse: (input: RunTaskCommandInput) => string | undefined = () => undefined;

  before(async () => {
    dynamo = await startDynamoDbLocal('agenthost-runner-capacity');
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
    refuse = () => undefined;
    s3Mock.on(PutObjectCommand).callsFake((input: { Key: string; Body: Buffer }) => {
      objects.set(input.Key, String(input.Body));
      return {};
    });
    ecsMock.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
      const why = refuse(input);
      if (why) return { tasks: [], failures: [{ reason: why }] };
      return {
        tasks: [{ taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/sandbox/t${++tasks}` }],
        failures: [],
      };
    });
    ecsMock.on(StopTaskCommand).resolves({});
    const pool = new WarmRunnerPool({
      doc: DynamoDBDocumentClient.from(client),
      tableName: dynamo.tableName,
      floor: 0,
      ceiling: 10,
    });
    for (const r of await pool.list()) await pool.remove(r);
  });

  const setup = (options: { floor?: number; ceiling: number; spot?: boolean; taskStartMs?: number }) => {
    const pool = new WarmRunnerPool({
      doc: DynamoDBDocumentClient.from(client),
      tableName: dynamo.tableName,
      floor: options.floor ?? 0,
      ceiling: options.ceiling,
    });
    const warm: WarmRunners = {
      pool,
      idleMs: 600_000,
      boundIdle: IDLE_WAIT_BOUNDS,
      claimSlots: 5,
      lifetimeMs: 3_000_000,
    };
    const ctx: SessionContext = {
      cluster: 'agenthost-sandbox',
      taskDefinition: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/AgenthostSandbox:7',
      subnets: ['subnet-a'],
      securityGroups: ['sg-1'],
      bucket: 'agenthost-bundles',
      region: 'eu-west-1',
      pollMs: 100,
      maxPollMs: 250,
      describeMs: 2000,
      maxExecs: 200,
      runnerSource: 'module.exports = {}',
      inputsKey: '',
      spot: options.spot ?? false,
      capacityPollMs: 100,
      taskStartMs: options.taskStartMs ?? 0,
      warm,
      ecs: new ECSClient({ region: 'eu-west-1' }),
      s3: async () => new S3Client({ region: 'eu-west-1' }),
      presign: async (method: string, key: string) => `https://signed.example/${method}/${key}`,
    };
    const put = async (key: string, body: Buffer) => {
      objects.set(key, String(body));
    };
    const manifest = { v: 2, runId: 'run-1' } as unknown as RunManifest;
    const lease = (binding = alpha, deadlineMs = Date.now() + 30_000, size = DEFAULT_RUNNER_SIZE) =>
      leaseWarmRunner(ctx, warm, { binding, manifest, size, deadlineMs }, put, put);
    return { pool, warm, ctx, put, lease };
  };

  const runTasks = () => ecsMock.commandCalls(RunTaskCommand).map((c) => c.args[0].input);

  test('a runner started for a claim counts against the ceiling: past it a run waits, then fails naming the ceiling', async () => {
    const { pool, lease } = setup({ ceiling: 2 });
    const first = await lease(alpha);
    const second = await lease(bravo);
    assert.equal((await pool.list()).length, 2, 'both started for claims, both in the pool');
    const started = Date.now();
    await assert.rejects(
      // 6 s: it waits for a runner until 3 s are left, even when the store answers slowly.
      lease({ workspaceId: 'ws_charlie', agentVersion: 'agv_1' }, Date.now() + 6000),
      (err: unknown) => {
        assert.ok(err instanceof SandboxCapacityError, String(err));
        assert.equal(err.reason, 'ceiling');
        assert.equal(err.retryAfterSeconds, 5);
        assert.match(err.message, /All 2 sandboxes this platform may run at once are busy/);
        return true;
      },
    );
    assert.ok(Date.now() - started >= 500, 'it waited for a runner before giving up');
    assert.equal(runTasks().length, 2, 'no third task');
    await first.release();
    await second.release();
    await first.refilled;
  });

  test('past the ceiling, a run waiting for a runner gets the one a busy run releases', async () => {
    const { lease } = setup({ ceiling: 1 });
    const first = await lease(alpha);
    const waiting = lease(alpha, Date.now() + 10_000);
    await new Promise((r) => setTimeout(r, 300));
    await first.release();
    const second = await waiting;
    assert.equal(second.taskArn, first.taskArn, 'the same runner, claimed again');
    assert.equal(runTasks().length, 1);
  });

  test('a steady pair’s run waits a moment for the pair’s busy runner rather than starting a task', async () => {
    const { lease } = setup({ ceiling: 5 });
    const first = await lease(alpha);
    const waiting = lease(alpha, Date.now() + 10_000);
    await new Promise((r) => setTimeout(r, 300));
    await first.release();
    const second = await waiting;
    assert.equal(second.taskArn, first.taskArn, 'the runner the last run released');
    assert.equal(runTasks().length, 1, 'no task started while the pair’s runner was about to be free');
    await second.release();
    // Another pair has no runner of its own busy: it starts one at once.
    const started = Date.now();
    const other = await lease(bravo);
    assert.ok(Date.now() - started < 1500, 'no wait for a pair with nothing busy');
    assert.notEqual(other.taskArn, first.taskArn);
    await other.release();
  });

  test('past the ceiling, an idle runner of another pair is stopped to make room', async () => {
    const { pool, lease } = setup({ ceiling: 1 });
    const first = await lease(alpha);
    await first.release();
    const other = await lease(bravo, Date.now() + 10_000);
    const stopped = ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input.task);
    assert.deepEqual(stopped, [first.taskArn]);
    assert.notEqual(other.taskArn, first.taskArn);
    assert.deepEqual(
      (await pool.list()).map((r) => [r.taskArn, r.binding]),
      [[other.taskArn, 'ws_bravo|agv_1']],
    );
  });

  test("past the account's vCPU quota a run waits for it, and starts once ECS takes the task", async () => {
    const { pool, lease } = setup({ ceiling: 5 });
    let refusals = 3;
    refuse = () => (refusals-- > 0 ? VCPU_LIMIT : undefined);
    const got = await lease(alpha, Date.now() + 10_000);
    assert.ok(got.taskArn);
    assert.equal(runTasks().length, 4);
    assert.deepEqual(
      (await pool.list()).map((r) => r.taskArn),
      [got.taskArn],
      'the refused starts left no slot held',
    );
  });

  test('a run with less time left than a task takes to start starts none: it takes a runner that frees up, or answers 503 naming the start', async () => {
    const { pool, lease } = setup({ ceiling: 5, taskStartMs: 10_000 });
    const started = Date.now();
    await assert.rejects(lease(alpha, Date.now() + 4000), (err: unknown) => {
      assert.ok(err instanceof SandboxCapacityError, String(err));
      assert.equal(err.reason, 'start');
      assert.equal(err.retryAfterSeconds, 5);
      assert.match(
        err.message,
        /starting one and running in it takes about 13 s, more than this call has left/,
      );
      return true;
    });
    assert.ok(Date.now() - started >= 500, 'it waited for a runner to free up before giving up');
    assert.equal(runTasks().length, 0, 'no task started that could only time out');
    assert.deepEqual(await pool.list(), [], 'and no slot held');
    // With time for a start, the same pair's run starts its runner; a later run with little time
    // left then takes it once it is released.
    const first = await lease(alpha, Date.now() + 30_000);
    const waiting = lease(alpha, Date.now() + 5000);
    await new Promise((r) => setTimeout(r, 300));
    await first.release();
    assert.equal((await waiting).taskArn, first.taskArn);
    assert.equal(runTasks().length, 1);
  });

  test('past the quota until the deadline: a SandboxCapacityError naming the quota, and no slot held', async () => {
    const { pool, lease } = setup({ ceiling: 5 });
    refuse = () => VCPU_LIMIT;
    // 6 s: RunTask is tried (and refused) until 3 s are left, even when the store answers slowly
    // on a loaded machine (3.5 s left too little: the first try came too late, answered "start").
    await assert.rejects(lease(alpha, Date.now() + 6000), (err: unknown) => {
      assert.ok(err instanceof SandboxCapacityError, String(err));
      assert.equal(err.reason, 'quota');
      assert.equal(err.retryAfterSeconds, 15);
      assert.match(err.message, /Fargate vCPU quota/);
      return true;
    });
    assert.deepEqual(await pool.list(), []);
  });

  test('a run is sized as its agent declares: overrides for any size but the default', async () => {
    const { pool, lease } = setup({ ceiling: 5 });
    await lease(alpha);
    await lease(bravo, Date.now() + 30_000, { cpu: 1024, memory: 3072 });
    const [plain, sized] = runTasks();
    assert.equal(plain?.overrides?.cpu, undefined, 'the task definition’s own size: no override');
    assert.equal(plain?.overrides?.memory, undefined);
    assert.equal(sized?.overrides?.cpu, '1024');
    assert.equal(sized?.overrides?.memory, '3072');
    const bound = (await pool.list()).find((r) => r.binding === 'ws_bravo|agv_1');
    assert.deepEqual([bound?.cpu, bound?.memory], [1024, 3072]);
  });

  test('the claim tells the runner how long to wait: 60 s for a pair called once', async () => {
    const { lease } = setup({ ceiling: 5 });
    await lease(alpha);
    const claimKey = [...objects.keys()].find((k) => /claim-1\.json$/.test(k));
    const claim = JSON.parse(objects.get(claimKey ?? '') ?? '{}') as RunnerClaim;
    assert.equal(claim.idleMs, 60_000);
  });

  test('with sandboxSpot the unbound floor asks Fargate Spot first, on-demand when Spot refuses', async () => {
    const { ctx, warm, put, pool } = setup({ floor: 2, ceiling: 5, spot: true });
    let spotRefusals = 1;
    refuse = (input) =>
      input.capacityProviderStrategy && spotRefusals-- > 0
        ? 'You’ve reached the limit on the number of vCPUs you can run concurrently'
        : undefined;
    assert.equal(await topUpPool(ctx, warm, put), 2);
    const inputs = runTasks();
    const spot = inputs.filter((i) => i.capacityProviderStrategy?.[0]?.capacityProvider === 'FARGATE_SPOT');
    const onDemand = inputs.filter((i) => i.launchType === 'FARGATE');
    assert.equal(spot.length, 2, 'both asked Spot first');
    assert.equal(onDemand.length, 1, 'the refused one fell back to on-demand');
    for (const i of spot) assert.equal(i.launchType, undefined, 'never both a strategy and a launch type');
    assert.equal((await pool.list()).length, 2);
  });

  test('a run started for a claim never goes to Spot', async () => {
    const { lease } = setup({ ceiling: 5, spot: true });
    await lease(alpha);
    assert.deepEqual(
      runTasks().map((i) => [i.startedBy, i.launchType, i.capacityProviderStrategy]),
      [['agenthost-warm-pool', 'FARGATE', undefined]],
    );
  });
});
