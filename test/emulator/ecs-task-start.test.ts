import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { EcsServiceEmulator } from '../../functions/emulator/ecs-service-emulator.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * PLATFORM_EMULATOR_TASK_START_MS: an emulated ECS task, from RunTask or from a
 * service, waits that long before its container runs, as a Fargate task takes 20 to 60 s on AWS;
 * StopTask while it waits ends it without its container ever running. Driven through the AWS SDK's
 * own ECS client. The delay here is short (the suite waits on it); the end-to-end and bench runs
 * use the cloud's figure.
 */

const START_MS = 1000;
const ACCOUNT = { region: 'us-east-1', accountId: '000000000000' };

describe('emulated ECS tasks start after PLATFORM_EMULATOR_TASK_START_MS, as Fargate tasks do', () => {
  let dir: string;
  let ecs: EcsEmulator;
  let services: EcsServiceEmulator;
  let client: ECSClient;
  let taskDefinition: string;
  const log: string[] = [];
  /** Every service task state change, with the time it was emitted. */
  const changes: { at: number; lastStatus: string; taskArn: string }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-start-'));
    const resolver = new TemplateResolver(
      [
        {
          stackName: 'Start',
          template: {
            Resources: {
              Task: {
                Type: 'AWS::ECS::TaskDefinition',
                Properties: {
                  Cpu: '256',
                  Memory: '512',
                  ContainerDefinitions: [{ Name: 'main', EntryPoint: ['sh', '-c'], Command: ['exit 7'] }],
                },
              },
            },
          },
        },
      ],
      ACCOUNT,
    );
    taskDefinition = String(resolver.resolve(resolver.stack('Start'), { Ref: 'Task' }));
    ecs = new EcsEmulator({
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'tasks'), outbound: false }),
      hostPorts: [],
      ...ACCOUNT,
      taskStartMs: START_MS,
    });
    services = new EcsServiceEmulator({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'service-tasks') }),
      hostPorts: [],
      ...ACCOUNT,
      taskStartMs: START_MS,
      log: (line) => log.push(line),
      freePort: freeLoopbackPort,
      secretValue: async () => {
        throw new Error('no secrets here');
      },
      putLogLine: () => undefined,
      registerTarget: () => undefined,
      deregisterTarget: () => undefined,
      taskStateChange: async (detail) => {
        const d = detail as { lastStatus?: string; taskArn?: string };
        changes.push({ at: Date.now(), lastStatus: String(d.lastStatus), taskArn: String(d.taskArn) });
      },
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

  const describeTask = async (arn: string): Promise<Task> => {
    const out = await client.send(new DescribeTasksCommand({ cluster: 'sandbox', tasks: [arn] }));
    assert.ok(out.tasks?.[0], arn);
    return out.tasks[0];
  };
  const runTask = async () => {
    const out = await client.send(new RunTaskCommand({ cluster: 'sandbox', taskDefinition }));
    const arn = out.tasks?.[0]?.taskArn;
    assert.ok(arn);
    return { arn, sentAt: Date.now() };
  };

  it('RunTask: the task stays PENDING for the start time, then its container runs to its exit', async () => {
    const { arn, sentAt } = await runTask();
    const pending = await describeTask(arn);
    assert.equal(pending.lastStatus, 'PENDING');
    assert.equal(pending.startedAt, undefined, 'not started yet');
    const stopped = await waitFor(
      'the task to stop',
      async () => {
        const t = await describeTask(arn);
        return t.lastStatus === 'STOPPED' ? t : undefined;
      },
      15_000,
      20,
    );
    assert.equal(stopped.containers?.[0]?.exitCode, 7, 'the container ran');
    assert.ok(stopped.createdAt && stopped.startedAt);
    const waited = stopped.startedAt.getTime() - stopped.createdAt.getTime();
    assert.ok(waited >= START_MS - 5, `started ${waited} ms after it was created`);
    assert.ok(Date.now() - sentAt >= START_MS - 5);
  });

  it('StopTask while the task is starting: it stops at once, and its container never runs', async () => {
    const { arn } = await runTask();
    await client.send(new StopTaskCommand({ cluster: 'sandbox', task: arn, reason: 'not needed' }));
    const stopped = await waitFor(
      'the task to stop before its start time',
      async () => {
        const t = await describeTask(arn);
        return t.lastStatus === 'STOPPED' ? t : undefined;
      },
      START_MS / 2,
      20,
    );
    assert.equal(stopped.stopCode, 'UserInitiated');
    assert.equal(stopped.stoppedReason, 'not needed');
    assert.equal(stopped.startedAt, undefined, 'never started');
    assert.equal(stopped.containers?.[0]?.exitCode, undefined, 'no container exit');
  });

  it('a service task stays PROVISIONING for the start time before its containers start', async () => {
    await client.send(
      new RegisterTaskDefinitionCommand({
        family: 'svc',
        // The init is a node process: V8 reserves more address space than 512 MiB allows.
        memory: '2048',
        containerDefinitions: [{ name: 'app', essential: true, entryPoint: ['sleep'], command: ['600'] }],
      }),
    );
    const createdAt = Date.now();
    await client.send(
      new CreateServiceCommand({
        cluster: 'services',
        serviceName: 'svc',
        taskDefinition: 'svc',
        desiredCount: 1,
      }),
    );
    const running = await waitFor(
      'the service task to run',
      () => changes.find((c) => c.lastStatus === 'RUNNING'),
      15_000,
      20,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(changes)}\n${log.join('\n')}`);
    });
    const mine = changes.filter((c) => c.taskArn === running.taskArn);
    assert.equal(mine[0]?.lastStatus, 'PROVISIONING', 'first seen provisioning');
    const pending = mine.find((c) => c.lastStatus === 'PENDING');
    assert.ok(pending, 'then pending (its sandbox open)');
    assert.ok(
      pending.at - (mine[0]?.at ?? 0) >= START_MS - 5,
      `provisioning for ${pending.at - (mine[0]?.at ?? 0)} ms`,
    );
    assert.ok(
      running.at - createdAt >= START_MS - 5,
      `running ${running.at - createdAt} ms after CreateService`,
    );
    await client.send(new DeleteServiceCommand({ cluster: 'services', service: 'svc', force: true }));
  });
});
