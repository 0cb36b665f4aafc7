import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
  DescribeTasksCommand,
  ECSClient,
  ListClustersCommand,
  ListTasksCommand,
  type ListTasksCommandInput,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  type RunTaskCommandInput,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { EcsServiceEmulator } from '../../functions/emulator/ecs-service-emulator.ts';
import { VCPU_LIMIT_REASON } from '../../functions/emulator/ecs-task-ledger.ts';
import { fargateUsage, listFargateTasks } from '../../functions/emulator/fargate-usage.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The emulated ECS keeps the account's limits and shows its tasks, driven
 * from outside with the AWS SDK's own ECS client as an operator's script would: RunTask past the
 * Fargate vCPU quota (on-demand and Spot apart, pending tasks and services' tasks counted) answers
 * ECS's placement failure; ListClusters, ListTasks (filters, desired status, pages) and
 * DescribeTasks (size, capacity provider, times) answer as ECS does; sizes Fargate has not are
 * refused with ECS's error; and the usage the cost bench prices is read back from those answers.
 */

const ACCOUNT = { region: 'us-east-1', accountId: '000000000000' };
/** Short, but long enough that a task is still starting when the next request arrives. */
const START_MS = 1000;
const CLUSTER = 'sandbox';

describe('the emulated ECS keeps the Fargate vCPU quota and lists its tasks as ECS does', () => {
  let dir: string;
  let ecs: EcsEmulator;
  let services: EcsServiceEmulator;
  let client: ECSClient;
  let sleeper: string;
  let quick: string;
  let tooSmall: string;
  const log: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-account-'));
    const resolver = new TemplateResolver(
      [
        {
          stackName: 'Account',
          template: {
            Resources: {
              Cluster: { Type: 'AWS::ECS::Cluster', Properties: { ClusterName: CLUSTER } },
              Idle: { Type: 'AWS::ECS::Cluster', Properties: { ClusterName: 'idle' } },
              // 1 vCPU, 2 GB: the sandbox's size, running until stopped.
              Sleeper: {
                Type: 'AWS::ECS::TaskDefinition',
                Properties: {
                  Cpu: '1024',
                  Memory: '2048',
                  ContainerDefinitions: [{ Name: 'main', EntryPoint: ['sleep'], Command: ['600'] }],
                },
              },
              // Fargate's smallest, done at once.
              Quick: {
                Type: 'AWS::ECS::TaskDefinition',
                Properties: {
                  Cpu: '256',
                  Memory: '512',
                  ContainerDefinitions: [{ Name: 'main', EntryPoint: ['sh', '-c'], Command: ['exit 0'] }],
                },
              },
              // No Fargate size has 1 vCPU with 1 GB.
              TooSmall: {
                Type: 'AWS::ECS::TaskDefinition',
                Properties: {
                  Cpu: '1024',
                  Memory: '1024',
                  ContainerDefinitions: [{ Name: 'main', EntryPoint: ['true'] }],
                },
              },
            },
          },
        },
      ],
      ACCOUNT,
    );
    const ref = (id: string) => String(resolver.resolve(resolver.stack('Account'), { Ref: id }));
    sleeper = ref('Sleeper');
    quick = ref('Quick');
    tooSmall = ref('TooSmall');
    ecs = new EcsEmulator({
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'tasks'), outbound: false }),
      hostPorts: [],
      ...ACCOUNT,
      taskStartMs: START_MS,
      quotas: { onDemandVcpu: 2, spotVcpu: 1 },
      log: (line) => log.push(line),
    });
    services = new EcsServiceEmulator({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'service-tasks') }),
      hostPorts: [],
      ...ACCOUNT,
      taskStartMs: START_MS,
      ledger: ecs.ledger,
      log: (line) => log.push(line),
      freePort: freeLoopbackPort,
      secretValue: async () => {
        throw new Error('no secrets here');
      },
      putLogLine: () => undefined,
      registerTarget: () => undefined,
      deregisterTarget: () => undefined,
      taskStateChange: async () => undefined,
    });
    ecs.addOperations(services.operations());
    client = new ECSClient({
      region: ACCOUNT.region,
      endpoint: await ecs.listen(0, '127.0.0.1'),
      credentials: S3_EMULATOR_CREDENTIALS,
    });
  });

  after(async () => {
    client?.destroy();
    await services?.close();
    await ecs?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (input: Omit<RunTaskCommandInput, 'taskDefinition'> & { taskDefinition?: string }) =>
    client.send(new RunTaskCommand({ cluster: CLUSTER, taskDefinition: sleeper, ...input }));
  const placed = async (input: Parameters<typeof run>[0] = {}) => {
    const out = await run(input);
    assert.deepEqual(out.failures, [], 'placed');
    const arn = out.tasks?.[0]?.taskArn;
    assert.ok(arn);
    return arn;
  };
  const describeTask = async (arn: string): Promise<Task> => {
    const out = await client.send(new DescribeTasksCommand({ cluster: CLUSTER, tasks: [arn] }));
    assert.ok(out.tasks?.[0], arn);
    return out.tasks[0];
  };
  const stopped = (arn: string) =>
    waitFor(
      `${arn} to stop`,
      async () => {
        const t = await describeTask(arn);
        return t.lastStatus === 'STOPPED' ? t : undefined;
      },
      15_000,
      20,
    );
  const list = async (input: Omit<ListTasksCommandInput, 'cluster'> = {}) =>
    (await client.send(new ListTasksCommand({ cluster: CLUSTER, ...input }))).taskArns ?? [];

  // Each test starts with nothing running: the quota is the account's, shared by all of them.
  afterEach(async () => {
    for (const arn of await list()) {
      await client.send(new StopTaskCommand({ cluster: CLUSTER, task: arn }));
    }
    // Stopped, not only asked to: a task holds its vCPUs until its containers have exited.
    await waitFor(
      'every task to stop',
      () =>
        ecs.ledger.vcpusInUse('FARGATE') + ecs.ledger.vcpusInUse('FARGATE_SPOT') === 0 ? true : undefined,
      15_000,
      20,
    );
  });

  it('RunTask past the on-demand quota answers ECS failure with no task; starting tasks count; Spot has its own quota', async () => {
    const first = await placed();
    const second = await placed();
    // Two 1-vCPU tasks, still starting, hold the account's 2 vCPUs.
    const refused = await run({ launchType: 'FARGATE' });
    assert.deepEqual(refused.tasks, []);
    assert.deepEqual(refused.failures, [{ reason: VCPU_LIMIT_REASON }]);
    assert.equal((await describeTask(first)).lastStatus, 'PENDING', 'counted while still starting');
    // A fraction of a vCPU does not fit either.
    const small = await run({ taskDefinition: quick });
    assert.deepEqual(small.failures, [{ reason: VCPU_LIMIT_REASON }]);

    // Spot's quota (1 vCPU here) is apart from on-demand's.
    const spot = { capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }] };
    const spotTask = await placed(spot);
    assert.equal((await describeTask(spotTask)).capacityProviderName, 'FARGATE_SPOT');
    assert.deepEqual((await run(spot)).failures, [{ reason: VCPU_LIMIT_REASON }]);

    // A task that stopped gives its vCPUs back.
    await client.send(new StopTaskCommand({ cluster: CLUSTER, task: second, reason: 'room' }));
    await stopped(second);
    await placed();
  });

  it("a service's tasks count against the same quota: one that does not fit waits, said in its events, and runs once there is room", async () => {
    await placed();
    const blocking = await placed();
    await client.send(
      new RegisterTaskDefinitionCommand({
        family: 'svc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '512',
        // The task's init is a node process, which needs more address space than 1 GB.
        memory: '2048',
        containerDefinitions: [{ name: 'app', essential: true, entryPoint: ['sleep'], command: ['600'] }],
      }),
    );
    await client.send(
      new CreateServiceCommand({
        cluster: CLUSTER,
        serviceName: 'svc',
        taskDefinition: 'svc',
        desiredCount: 1,
        launchType: 'FARGATE',
      }),
    );
    const service = await client.send(new DescribeServicesCommand({ cluster: CLUSTER, services: ['svc'] }));
    assert.match(
      service.services?.[0]?.events?.[0]?.message ?? '',
      /^\(service svc\) was unable to place a task\. Reason: You’ve reached the limit on the number of vCPUs you can run concurrently/,
    );
    assert.deepEqual(await list({ serviceName: 'svc' }), [], 'not placed');

    await client.send(new StopTaskCommand({ cluster: CLUSTER, task: blocking }));
    const [svcTask] = await waitFor(
      'the service task to be placed',
      async () => {
        const arns = await list({ serviceName: 'svc' });
        return arns.length > 0 ? arns : undefined;
      },
      15_000,
      50,
    );
    assert.ok(svcTask);
    const t = await describeTask(svcTask);
    assert.equal(t.group, 'service:svc');
    assert.equal(t.cpu, '512');
    assert.equal(t.memory, '2048');
    assert.equal(t.capacityProviderName, 'FARGATE');
    // 1 vCPU of RunTask's and the service's half: another vCPU does not fit.
    assert.deepEqual((await run({})).failures, [{ reason: VCPU_LIMIT_REASON }]);

    await client.send(new DeleteServiceCommand({ cluster: CLUSTER, service: 'svc', force: true }));
  });

  it('ListClusters, ListTasks by status, family and startedBy in pages, and DescribeTasks with what an operator reads', async () => {
    const since = Date.now();
    const quickOnes: string[] = [];
    for (let i = 0; i < 3; i++) quickOnes.push(await placed({ taskDefinition: quick, startedBy: 'quick-x' }));
    const resized = await placed({
      taskDefinition: quick,
      startedBy: 'resized',
      group: 'batch',
      overrides: { cpu: '512', memory: '1024' },
    });
    for (const arn of [...quickOnes, resized]) await stopped(arn);
    const running = await placed({ startedBy: 'sleepy' });

    const clusters = (await client.send(new ListClustersCommand({}))).clusterArns ?? [];
    for (const name of [CLUSTER, 'idle']) {
      assert.ok(clusters.includes(`arn:aws:ecs:us-east-1:000000000000:cluster/${name}`), name);
    }

    // Running by default; stopped ones on asking.
    assert.deepEqual(await list(), [running]);
    const stoppedQuick = await list({ desiredStatus: 'STOPPED', family: 'AccountQuick' });
    assert.deepEqual(new Set(stoppedQuick), new Set([...quickOnes, resized]));
    assert.deepEqual(
      new Set(await list({ desiredStatus: 'STOPPED', startedBy: 'quick-x' })),
      new Set(quickOnes),
    );
    assert.deepEqual(await list({ desiredStatus: 'PENDING' }), [], 'ECS never desires PENDING');
    assert.deepEqual(await list({ family: 'AccountQuick' }), [], 'none running');

    // Pages of one, each token leading to the next, together the whole list once.
    const paged: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const out = await client.send(
        new ListTasksCommand({
          cluster: CLUSTER,
          desiredStatus: 'STOPPED',
          family: 'AccountQuick',
          maxResults: 1,
          ...(token ? { nextToken: token } : {}),
        }),
      );
      assert.ok((out.taskArns ?? []).length <= 1);
      paged.push(...(out.taskArns ?? []));
      token = out.nextToken;
      pages++;
    } while (token && pages < 10);
    assert.deepEqual(paged.sort(), [...stoppedQuick].sort());
    assert.equal(pages, 4);

    const t = await describeTask(resized);
    assert.equal(t.taskDefinitionArn, quick);
    assert.equal(t.clusterArn, 'arn:aws:ecs:us-east-1:000000000000:cluster/sandbox');
    assert.equal(t.group, 'batch');
    assert.equal(t.cpu, '512', "the override's size, as a string");
    assert.equal(t.memory, '1024');
    assert.equal(t.lastStatus, 'STOPPED');
    assert.equal(t.desiredStatus, 'STOPPED');
    assert.equal(t.launchType, 'FARGATE');
    assert.equal(t.capacityProviderName, 'FARGATE');
    assert.equal(t.stoppedReason, 'Essential container in task exited');
    assert.ok(t.createdAt && t.startedAt && t.stoppedAt && t.pullStartedAt);
    assert.ok(t.createdAt.getTime() >= since - 1000);
    assert.ok(t.startedAt.getTime() - t.createdAt.getTime() >= START_MS - 5, 'started after the start time');
    assert.ok(t.stoppedAt >= t.startedAt);
    const q = await describeTask(quickOnes[0] as string);
    assert.equal(q.group, 'family:AccountQuick', "a standalone task's default group");
    assert.equal(q.cpu, '256');
    assert.equal(q.memory, '512');

    // What it is asked wrongly answers ECS's errors.
    await assert.rejects(
      client.send(new ListTasksCommand({ cluster: 'nowhere' })),
      (err: Error) => err.name === 'ClusterNotFoundException',
    );
    await assert.rejects(
      client.send(new ListTasksCommand({ cluster: CLUSTER, maxResults: 0 })),
      (err: Error) => err.name === 'InvalidParameterException',
    );
    const missing = await client.send(new DescribeTasksCommand({ cluster: 'idle', tasks: [resized] }));
    assert.deepEqual(missing.failures, [{ arn: resized, reason: 'MISSING' }], "another cluster's task");

    // The usage the cost bench prices, read back the same way: each quick task is billed
    // Fargate's minute, a quarter vCPU and half a GB.
    const usage = fargateUsage(
      (await listFargateTasks(client)).filter((x) => x.startedBy === 'quick-x'),
      { from: since - 1000, to: Date.now() + 10 * 60_000 },
    );
    assert.deepEqual(usage.FARGATE, { tasks: 3, vcpuSeconds: 3 * 0.25 * 60, gbSeconds: 3 * 0.5 * 60 });
    assert.deepEqual(usage.FARGATE_SPOT, { tasks: 0, vcpuSeconds: 0, gbSeconds: 0 });
  });

  it("sizes Fargate has not are refused with ECS's error, from the definition or the overrides", async () => {
    const noSize =
      /^No Fargate configuration exists for given values: 512 CPU, 512 memory\. See the Amazon ECS documentation for the valid values\.$/;
    await assert.rejects(
      run({ taskDefinition: quick, overrides: { cpu: '512', memory: '512' } }),
      (err: Error) => err.name === 'ClientException' && noSize.test(err.message),
    );
    await assert.rejects(
      run({ taskDefinition: tooSmall }),
      (err: Error) => err.name === 'ClientException' && /1024 CPU, 1024 memory/.test(err.message),
    );
    await assert.rejects(
      client.send(
        new RegisterTaskDefinitionCommand({
          family: 'huge',
          requiresCompatibilities: ['FARGATE'],
          cpu: '256',
          memory: '4096',
          containerDefinitions: [{ name: 'app', entryPoint: ['true'] }],
        }),
      ),
      (err: Error) => err.name === 'ClientException' && /256 CPU, 4096 memory/.test(err.message),
    );
    await assert.rejects(
      run({ launchType: 'FARGATE', capacityProviderStrategy: [{ capacityProvider: 'FARGATE' }] }),
      (err: Error) => err.name === 'InvalidParameterException',
    );
    assert.deepEqual(await list(), [], 'nothing started');
  });
});
