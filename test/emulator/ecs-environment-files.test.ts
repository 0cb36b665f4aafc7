import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { parseEnvironmentFile } from '../../functions/emulator/ecs-environment-files.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * RunTask's `environmentFiles` on the emulated ECS: the sandbox's RunTask names
 * an env file, never the manifest's URL, so the emulated task must get the file's variables as
 * ECS's agent gives them, and fail to start, as on ECS, when the file cannot be read.
 */

const ACCOUNT = { region: 'us-east-1', accountId: '000000000000' };
const ENV_FILE = 'arn:aws:s3:::runs/sandbox-inputs/run-1/task.env';

describe('emulated ECS: a task’s env files', () => {
  let dir: string;
  let ecs: EcsEmulator;
  let client: ECSClient;
  let taskDefinition: string;
  const objects = new Map<string, string>();
  const reads: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-env-files-'));
    const resolver = new TemplateResolver(
      [
        {
          stackName: 'Env',
          template: {
            Resources: {
              Task: {
                Type: 'AWS::ECS::TaskDefinition',
                Properties: {
                  Cpu: '256',
                  Memory: '512',
                  ContainerDefinitions: [
                    {
                      Name: 'runner',
                      // Exits 0 only when the file's variables arrived, the direct one winning.
                      EntryPoint: ['sh', '-c'],
                      Command: [
                        'test "$FROM_FILE" = "a=b&c" && test "$BOTH" = direct && test -z "$COMMENTED"',
                      ],
                    },
                  ],
                },
              },
            },
          },
        },
      ],
      ACCOUNT,
    );
    taskDefinition = String(resolver.resolve(resolver.stack('Env'), { Ref: 'Task' }));
    ecs = new EcsEmulator({
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'tasks'), outbound: false }),
      hostPorts: [],
      ...ACCOUNT,
      readObject: async (bucket, key) => {
        reads.push(`${bucket}/${key}`);
        const text = objects.get(`${bucket}/${key}`);
        if (text === undefined) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
        return text;
      },
    });
    client = new ECSClient({
      region: ACCOUNT.region,
      endpoint: await ecs.listen(0, '127.0.0.1'),
      credentials: S3_EMULATOR_CREDENTIALS,
    });
  });

  after(async () => {
    client?.destroy();
    await ecs?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (environmentFiles: { type: 's3'; value: string }[]): Promise<Task> => {
    const out = await client.send(
      new RunTaskCommand({
        cluster: 'sandbox',
        taskDefinition,
        overrides: {
          containerOverrides: [
            { name: 'runner', environmentFiles, environment: [{ name: 'BOTH', value: 'direct' }] },
          ],
        },
      }),
    );
    const arn = out.tasks?.[0]?.taskArn;
    assert.ok(arn);
    return waitFor(
      'the task to stop',
      async () => {
        const t = (await client.send(new DescribeTasksCommand({ cluster: 'sandbox', tasks: [arn] })))
          .tasks?.[0];
        return t?.lastStatus === 'STOPPED' ? t : undefined;
      },
      15_000,
      20,
    );
  };

  it('reads ECS’s format: NAME=value lines, the value whole after the first =, comments and blanks skipped', () => {
    assert.deepEqual(
      parseEnvironmentFile('# a comment\n\nA=1\nURL=https://x/?a=b&c=d\r\nNOEQUALS\n=novalue\n'),
      {
        A: '1',
        URL: 'https://x/?a=b&c=d',
      },
    );
  });

  it('the container gets the file’s variables, under those set directly', async () => {
    objects.set(
      'runs/sandbox-inputs/run-1/task.env',
      '# from the platform\nFROM_FILE=a=b&c\nBOTH=from-file\n#COMMENTED=1\n',
    );
    const task = await run([{ type: 's3', value: ENV_FILE }]);
    assert.equal(task.stopCode, 'EssentialContainerExited');
    assert.equal(task.containers?.[0]?.exitCode, 0, JSON.stringify(task));
    assert.ok(reads.includes('runs/sandbox-inputs/run-1/task.env'));
  });

  it('a file that cannot be read: the task stops before its container runs', async () => {
    const task = await run([{ type: 's3', value: 'arn:aws:s3:::runs/sandbox-inputs/missing/task.env' }]);
    assert.equal(task.stopCode, 'TaskFailedToStart');
    assert.match(String(task.stoppedReason), /^ResourceInitializationError: failed to download env files/);
    assert.equal(task.containers?.[0]?.exitCode, undefined, 'no container ran');
  });

  it('RunTask refuses an env file that is not an S3 object named *.env', async () => {
    for (const value of [
      'https://runs.s3.amazonaws.com/sandbox-inputs/run-1/task.env',
      'arn:aws:s3:::runs/run.json',
    ]) {
      await assert.rejects(
        client.send(
          new RunTaskCommand({
            cluster: 'sandbox',
            taskDefinition,
            overrides: {
              containerOverrides: [{ name: 'runner', environmentFiles: [{ type: 's3', value }] }],
            },
          }),
        ),
        (err: Error) => err.name === 'ClientException' && /\*\.env/.test(err.message),
      );
    }
  });
});
