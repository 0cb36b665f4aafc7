/**
 * The ServiceRunner contract (test/contract/service-runner-contract.ts) against every adapter: the
 * local service host on bubblewrap, and the ECS service runner against the emulated deployment's
 * stand-ins, wired as functions/emulator/emulated-deployment.ts wires them (ECS with its services,
 * whose tasks run their containers under bubblewrap; the load balancer's API and its loopback
 * front; Application Auto Scaling; CloudWatch Logs; S3 as s3rver), over a hand-made template
 * holding only the services listener. Everything is on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { ECSClient } from '@aws-sdk/client-ecs';
import { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { EcsServiceRunner } from '../../functions/adapters/aws/ecs-service-runner.ts';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { LocalServiceHost } from '../../functions/adapters/local/local-service-host.ts';
import { NO_ENTRYPOINT_EXIT } from '../../functions/containers/service-protocol.ts';
import { ApplicationAutoScalingEmulator } from '../../functions/emulator/application-auto-scaling-emulator.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { CloudWatchLogsEmulator } from '../../functions/emulator/cloudwatch-logs-emulator.ts';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { EcsEmulator } from '../../functions/emulator/ecs-emulator.ts';
import { EcsServiceEmulator } from '../../functions/emulator/ecs-service-emulator.ts';
import { Elbv2Emulator } from '../../functions/emulator/elbv2-emulator.ts';
import { LoadBalancerFront } from '../../functions/emulator/load-balancer-front.ts';
import type { ServiceExit } from '../../functions/ports/service-runner.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';
import { listenerOnlyStack, S3_EMULATOR_CREDENTIALS, startEmulatedS3 } from '../helpers/emulated-aws.ts';
import { fetchUrl } from '../helpers/localhost-fetch.ts';
import { serviceRunnerContract } from './service-runner-contract.ts';

/** A GET of a service URL (*.localhost names resolve to loopback, as browsers and curl have them). */
async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetchUrl(url);
  return { status: res.status, body: await res.text() };
}

serviceRunnerContract('local host (bubblewrap)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-runner-contract-'));
  return {
    runner: new LocalServiceHost({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'runs') }),
      host: '127.0.0.1',
      hostLoopbackPorts: [],
      healthyMs: 60_000,
      startTimeoutMs: 30_000,
      log: () => undefined,
    }),
    capabilities: { kind: 'local', fetchesBundle: false, logs: 'hooks', closeStopsServices: true },
    bundleUrl: () => Promise.reject(new Error('the local host is handed the bundle')),
    putSecrets: () => {
      throw new Error('the local host is handed the secret values');
    },
    get,
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

const REGION = 'us-east-1';
const ACCOUNT = { region: REGION, accountId: '000000000000' };
const BUCKET = 'contract-service-bundles';
const LOG_GROUP = 'contract-services';
const CLUSTER = 'contract-services';

serviceRunnerContract(
  'ECS (emulated: ECS services under bubblewrap, ELBv2 and its front, s3rver)',
  async (hooks) => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-ecs-runner-contract-'));
    const closers: (() => Promise<void>)[] = [];
    const { s3, endpoint: s3Endpoint } = await startEmulatedS3(dir, BUCKET);
    closers.push(() => s3.close());
    // Only what the services need of the stateless stack: the HTTPS listener (a 404 for other hosts).
    const resolver = new TemplateResolver(
      [listenerOnlyStack('Contract', { StatusCode: '404', ContentType: 'text/plain', MessageBody: 'no' })],
      ACCOUNT,
    );
    const elb = new Elbv2Emulator(resolver, ACCOUNT);
    const elbEndpoint = await elb.listen(0, '127.0.0.1');
    closers.push(() => elb.close());
    const listenerArn = elb.listenerArns()[0] as string;
    const front = new LoadBalancerFront(elb, listenerArn);
    const frontPort = await front.listen(0, '127.0.0.1');
    closers.push(() => front.close());
    const cloudWatchLogs = new CloudWatchLogsEmulator([LOG_GROUP]);
    const logsEndpoint = await cloudWatchLogs.listen(0, '127.0.0.1');
    closers.push(() => cloudWatchLogs.close());
    const ecs = new EcsEmulator({
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'tasks') }),
      hostPorts: [],
      ...ACCOUNT,
    });
    const ecsEndpoint = await ecs.listen(0, '127.0.0.1');
    closers.push(() => ecs.close());

    // Supervision in AWS is the events function's (functions/jobs/service-events.ts): it reads each
    // task state change as here, a task RUNNING and HEALTHY is ready, one stopped on its own (not by
    // the scheduler, for a deployment, a scale-in, a pause or a delete) is an exit.
    const secrets = new Map<string, string>();
    const services = new EcsServiceEmulator({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'service-tasks') }),
      hostPorts: [Number(new URL(s3Endpoint).port)],
      ...ACCOUNT,
      freePort: freeLoopbackPort,
      secretValue: async (valueFrom) => {
        const value = secrets.get(valueFrom.slice(valueFrom.indexOf(':secret:') + ':secret:'.length));
        if (value === undefined) throw new Error(`no secret ${valueFrom}`);
        return value;
      },
      putLogLine: (group, stream, line) => cloudWatchLogs.putLine(group, stream, line),
      registerTarget: (group, id, port) => elb.registerTarget(group, id, port),
      deregisterTarget: (group, id) => elb.deregisterTarget(group, id),
      taskStateChange: async (detail) => {
        const d = detail as {
          group?: string;
          lastStatus?: string;
          healthStatus?: string;
          stopCode?: string;
          stoppedReason?: string;
          containers?: { name?: string; exitCode?: number }[];
        };
        const id = /^service:svc-([0-9a-f-]{36})$/.exec(d.group ?? '')?.[1];
        if (!id) return;
        if (d.lastStatus === 'RUNNING' && d.healthStatus === 'HEALTHY') await hooks.onReady(id);
        if (d.lastStatus === 'STOPPED' && d.stopCode !== 'ServiceSchedulerInitiated') {
          const app = d.containers?.find((c) => c.name === 'app');
          const exit: ServiceExit = {
            exitCode: app?.exitCode ?? null,
            signal: null,
            reason: d.stoppedReason ?? '',
            uptimeMs: 0,
            fatal: app?.exitCode === NO_ENTRYPOINT_EXIT,
          };
          // Not to be restarted (a fatal exit, a crash loop): the events function pauses the service.
          if (!(await hooks.onExit(id, exit)).restart) await runner.stop(id);
        }
      },
    });
    ecs.addOperations(services.operations());
    closers.push(() => services.close());
    const scaling = new ApplicationAutoScalingEmulator({
      ...ACCOUNT,
      applyBounds: (target) => services.applyBounds(target),
    });
    const scalingEndpoint = await scaling.listen(0, '127.0.0.1');
    closers.push(() => scaling.close());

    const clientOf = { region: REGION, credentials: S3_EMULATOR_CREDENTIALS };
    const s3Client = new S3Client({
      ...clientOf,
      endpoint: s3Endpoint,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    const clients = {
      ecs: new ECSClient({ ...clientOf, endpoint: ecsEndpoint }),
      elb: new ElasticLoadBalancingV2Client({ ...clientOf, endpoint: elbEndpoint }),
      autoscaling: new ApplicationAutoScalingClient({ ...clientOf, endpoint: scalingEndpoint }),
      logs: new CloudWatchLogsClient({ ...clientOf, endpoint: logsEndpoint }),
    };
    closers.push(async () => {
      for (const c of [s3Client, ...Object.values(clients)]) c.destroy();
    });
    const presign = (method: 'GET' | 'PUT', key: string, ttlSeconds: number) =>
      getSignedUrl(
        s3Client,
        method === 'GET'
          ? new GetObjectCommand({ Bucket: BUCKET, Key: key })
          : new PutObjectCommand({ Bucket: BUCKET, Key: key }),
        { expiresIn: ttlSeconds },
      );
    const runner = new EcsServiceRunner({
      ...clients,
      cluster: CLUSTER,
      subnets: ['subnet-contract'],
      securityGroups: ['sg-contract'],
      executionRoleArn: `arn:aws:iam::${ACCOUNT.accountId}:role/contract-exec`,
      listenerArn,
      vpcId: 'vpc-contract',
      domain: 'services.localhost',
      urlScheme: 'http',
      urlPort: frontPort,
      logGroup: LOG_GROUP,
      region: REGION,
      image: 'node:24',
      secretsPrefix: 'contract',
      account: ACCOUNT.accountId,
      gatewaySource: buildContainerProgram('service-gateway'),
      launcherSource: buildContainerProgram('service-app-launcher'),
      bucket: BUCKET,
      presign,
    });
    let bundles = 0;
    return {
      runner,
      capabilities: { kind: 'ecs', fetchesBundle: true, logs: 'runner', closeStopsServices: false },
      async bundleUrl(data) {
        const key = `bundles/contract-${++bundles}.tar.gz`;
        await s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: data }));
        return presign('GET', key, 3600);
      },
      putSecrets(workspaceId, values) {
        for (const [name, value] of Object.entries(values))
          secrets.set(`contract/${workspaceId}/${name}`, value);
      },
      get,
      async close() {
        for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
);
