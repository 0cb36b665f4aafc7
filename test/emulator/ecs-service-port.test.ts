import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
} from '@aws-sdk/client-ecs';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { EcsServiceEmulator } from '../../functions/emulator/ecs-service-emulator.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A Fargate task has an address of its own, so its port is never taken. An emulated service task
 * is published on a host loopback port found free just before its sandbox binds it, and in between
 * any listener or client connection may take it (a CI run's contract test saw a task fail to start
 * that way, reported as a crash). Here the first port handed out is held by another listener: the
 * task must start all the same, on another port, with no stop reported.
 */

const ACCOUNT = { region: 'us-east-1', accountId: '000000000000' };
const START_MS = 500;

describe('an emulated service task whose chosen host port is taken starts on another', () => {
  let dir: string;
  let ecs: EcsEmulator;
  let services: EcsServiceEmulator;
  let client: ECSClient;
  let holder: Server;
  let held: number;
  const handedOut: number[] = [];
  const targets: { id: string; port: number }[] = [];
  const changes: { group?: string; lastStatus?: string; stopCode?: string }[] = [];
  /** Runs before a port other than the first is handed out (a test's way into the retry). */
  let beforeRetry: (() => Promise<void>) | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-port-'));
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    held = (holder.address() as { port: number }).port;
    ecs = new EcsEmulator({
      resolver: new TemplateResolver([], ACCOUNT),
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'tasks'), outbound: false }),
      hostPorts: [],
      ...ACCOUNT,
    });
    services = new EcsServiceEmulator({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'service-tasks') }),
      hostPorts: [],
      ...ACCOUNT,
      // A Fargate-like start (PLATFORM_EMULATOR_TASK_START_MS), short here: the port is chosen after it.
      taskStartMs: START_MS,
      // The race made certain: the first port is the held one.
      freePort: async () => {
        if (handedOut.length > 0) await beforeRetry?.();
        const port = handedOut.length === 0 ? held : await freeLoopbackPort();
        handedOut.push(port);
        return port;
      },
      secretValue: async () => {
        throw new Error('no secrets here');
      },
      putLogLine: () => undefined,
      registerTarget: (_group, id, port) => targets.push({ id, port }),
      deregisterTarget: () => undefined,
      taskStateChange: async (detail) => {
        changes.push(detail as { group?: string; lastStatus?: string; stopCode?: string });
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
    holder?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A service of the web app behind a target group of its own name (the task definition registered anew). */
  const createService = async (name: string) => {
    await client.send(
      new RegisterTaskDefinitionCommand({
        family: 'web',
        // The init is a node process: V8 reserves more address space than 512 MiB allows.
        memory: '2048',
        containerDefinitions: [
          {
            name: 'app',
            essential: true,
            entryPoint: ['node', '-e'],
            command: ["require('http').createServer((q, r) => r.end('web')).listen(3000)"],
            portMappings: [{ containerPort: 3000 }],
          },
        ],
      }),
    );
    await client.send(
      new CreateServiceCommand({
        cluster: 'services',
        serviceName: name,
        taskDefinition: 'web',
        desiredCount: 1,
        loadBalancers: [
          {
            targetGroupArn: `arn:aws:elasticloadbalancing:tg/${name}`,
            containerName: 'app',
            containerPort: 3000,
          },
        ],
      }),
    );
  };

  it('runs, registered at a port that is not the taken one, and answers there', async () => {
    await createService('web');
    try {
      const target = await waitFor('the task registered with its load balancer', () => targets[0], 15_000);
      assert.notEqual(target.port, held, 'not the taken port');
      assert.deepEqual(handedOut, [held, target.port]);
      const body = await waitFor('the app to answer at the registered port', async () => {
        const res = await fetch(`http://127.0.0.1:${target.port}/`).catch(() => undefined);
        return res?.ok ? await res.text() : undefined;
      });
      assert.equal(body, 'web');
      assert.deepEqual(
        changes.filter((c) => c.group === 'service:web' && c.lastStatus === 'STOPPED'),
        [],
        'no task stopped on the way (none failed to start)',
      );
    } finally {
      await client.send(new DeleteServiceCommand({ cluster: 'services', service: 'web', force: true }));
    }
  });

  it('stopped while its port was taken, it starts nothing on the next port', async () => {
    handedOut.length = 0;
    targets.length = 0;
    // The service is deleted after the first port failed and before the second is handed out.
    beforeRetry = async () => {
      beforeRetry = undefined;
      await client.send(new DeleteServiceCommand({ cluster: 'services', service: 'late', force: true }));
    };
    await createService('late');
    const mine = () => changes.filter((c) => c.group === 'service:late');
    await waitFor('the task stopped', () => mine().find((c) => c.lastStatus === 'STOPPED'), 15_000);
    assert.equal(handedOut[0], held, 'the first port tried was the taken one');
    assert.deepEqual(
      mine().filter((c) => c.lastStatus === 'RUNNING'),
      [],
      'its containers never ran',
    );
    assert.deepEqual(targets, [], 'nothing registered with the load balancer');
  });
});
