import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-ecs';
import {
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeleteRuleCommand,
  DeleteTargetGroupCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { ZipFile } from 'yazl';
import { rulePriority } from '../../functions/adapters/aws/ecs-service-load-balancing.ts';
import { launcherKey } from '../../functions/adapters/aws/ecs-service-names.ts';
import type { ServicePresign } from '../../functions/adapters/aws/ecs-service-options.ts';
import { EcsServiceRunner } from '../../functions/adapters/aws/ecs-service-runner.ts';
import { packDirectory } from '../../functions/cli/pack.ts';
import {
  GATEWAY_PORT_ENV,
  LAUNCH_FAILED_EXIT,
  NO_ENTRYPOINT_EXIT,
  PORT_CONFLICT_EXIT,
  SERVICE_APP_BOOTSTRAP,
} from '../../functions/containers/service-protocol.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { serviceEventKeys } from '../../functions/core/services/service-events.ts';
import {
  loadStoredService,
  type Service,
  serviceItem,
} from '../../functions/core/services/service-record.ts';
import { handleTaskEvent } from '../../functions/jobs/service-events.ts';
import { SERVICE_BUNDLE_URL_SECONDS, type ServiceLaunch } from '../../functions/ports/service-runner.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { waitFor } from '../helpers/wait-for.ts';

const ecs = mockClient(ECSClient);
const elb = mockClient(ElasticLoadBalancingV2Client);
const scaling = mockClient(ApplicationAutoScalingClient);
const cwl = mockClient(CloudWatchLogsClient);

const SERVICE_ID = '3f6c1d2e-8a9b-4c7d-9e0f-1a2b3c4d5e6f';
const WS = '9e6d5062-83a1-47e9-9897-ec3a89db0394';
const LISTENER = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/svc/abc/def';
const TG_ARN =
  'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/svc-3f6c1d2e8a9b4c7d9e0f1a2b3c4d/0123';

/** The task programs as the stack bundles them into the services functions' assets. */
const GATEWAY = buildContainerProgram('service-gateway');
const LAUNCHER = buildContainerProgram('service-app-launcher');

/**
 * A loopback stand-in for the bundle bucket: PUT stores an object, GET answers it (404 when
 * missing). Presigned URLs point here, with the method and lifetime in the query for assertions.
 */
class BucketStandIn {
  readonly objects = new Map<string, Buffer>();
  readonly requests: { method: string; key: string }[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const key = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      this.requests.push({ method: req.method ?? '', key });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'PUT') {
          this.objects.set(key, Buffer.concat(chunks));
          res.end();
          return;
        }
        const body = this.objects.get(key);
        res.writeHead(body ? 200 : 404);
        res.end(body ?? 'NoSuchKey');
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  presign: ServicePresign = async (method, key, ttl) =>
    `${this.url}/${key.split('/').map(encodeURIComponent).join('/')}?method=${method}&ttl=${ttl}`;

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

const bucket = new BucketStandIn();
before(() => bucket.start());
after(() => bucket.close());

const runner = () =>
  new EcsServiceRunner({
    ecs: new ECSClient({ region: 'eu-west-1' }),
    elb: new ElasticLoadBalancingV2Client({ region: 'eu-west-1' }),
    autoscaling: new ApplicationAutoScalingClient({ region: 'eu-west-1' }),
    logs: new CloudWatchLogsClient({ region: 'eu-west-1' }),
    cluster: 'agenthost-services',
    subnets: ['subnet-a', 'subnet-b'],
    securityGroups: ['sg-tasks'],
    executionRoleArn: 'arn:aws:iam::123456789012:role/svc-exec',
    listenerArn: LISTENER,
    vpcId: 'vpc-1',
    domain: 'services.example.com',
    logGroup: 'agenthost-services',
    region: 'eu-west-1',
    image: 'public.ecr.aws/docker/library/node:24-bookworm-slim',
    secretsPrefix: 'agenthost',
    account: '123456789012',
    gatewaySource: GATEWAY,
    launcherSource: LAUNCHER,
    bucket: 'agenthost-bundles',
    presign: bucket.presign,
  });

const launch: ServiceLaunch = {
  serviceId: SERVICE_ID,
  name: 'web',
  workspaceId: WS,
  bundle: { data: Buffer.alloc(0), format: 'tar.gz' },
  bundleUrl: 'https://bucket.s3.eu-west-1.amazonaws.com/bundles/x.tar.gz?X-Amz-Signature=abc',
  command: null,
  env: { GREETING: 'hi', PLATFORM_SERVICE_ID: SERVICE_ID },
  secretNames: ['APP_TOKEN'],
  secrets: {},
  http: true,
  instances: { min: 2, max: 3 },
};

describe('ECS service runner (aws-sdk-client-mock)', () => {
  beforeEach(() => {
    ecs.reset();
    elb.reset();
    scaling.reset();
    cwl.reset();
  });

  it('starts a new service: task definition, target group, host rule, ECS service and scaling target, exactly', async () => {
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:1' } });
    ecs.on(DescribeServicesCommand).resolves({ services: [] });
    ecs.on(CreateServiceCommand).resolves({});
    elb.on(CreateTargetGroupCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    elb.on(DescribeRulesCommand).resolves({ Rules: [] });
    elb.on(CreateRuleCommand).resolves({});
    scaling.on(RegisterScalableTargetCommand).resolves({});
    const started = await runner().start(launch);
    assert.deepEqual(started, { url: 'https://web-9e6d5062.services.example.com', port: null });

    const td = ecs.commandCalls(RegisterTaskDefinitionCommand)[0]?.args[0].input;
    assert.ok(td);
    assert.equal(td.family, `agenthost-svc-${SERVICE_ID}`);
    assert.equal(td.taskRoleArn, undefined, 'no task role: the app gets no AWS credentials');
    assert.equal(td.executionRoleArn, 'arn:aws:iam::123456789012:role/svc-exec');
    assert.deepEqual(td.requiresCompatibilities, ['FARGATE']);
    assert.equal(td.networkMode, 'awsvpc');
    const [gateway, app] = td.containerDefinitions ?? [];
    assert.equal(gateway?.name, 'gateway');
    assert.deepEqual(gateway?.portMappings, [{ containerPort: 8080, protocol: 'tcp' }]);
    assert.deepEqual(gateway?.command, ['node', '-e', GATEWAY]);
    assert.deepEqual(gateway?.environment, [
      { name: 'PLATFORM_HTTP_PORT', value: '3000' },
      { name: 'AGENTHOST_HTTP', value: 'true' },
    ]);
    assert.match(String(gateway?.healthCheck?.command?.[1]), /127\.0\.0\.1:8080\/health/);
    assert.equal(app?.name, 'app');
    assert.deepEqual(app?.command, ['node', '-e', SERVICE_APP_BOOTSTRAP]);
    // A task definition is limited to 64 KiB: the gateway inline, the launcher downloaded.
    assert.ok(JSON.stringify(td).length < 16 * 1024, `task definition is ${JSON.stringify(td).length} bytes`);
    assert.deepEqual(app?.dependsOn, [{ containerName: 'gateway', condition: 'START' }]);
    assert.deepEqual(app?.secrets, [
      {
        name: 'APP_TOKEN',
        valueFrom: `arn:aws:secretsmanager:eu-west-1:123456789012:secret:agenthost/${WS}/APP_TOKEN`,
      },
    ]);
    const env = Object.fromEntries((app?.environment ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.PORT, '3000');
    assert.equal(env.PLATFORM_HTTP_PORT, '3000');
    assert.equal(env.GREETING, 'hi');
    assert.equal(env.AGENTHOST_BUNDLE_URL, launch.bundleUrl);
    assert.equal(env.AGENTHOST_SECRET_NAMES, 'APP_TOKEN');
    // The launcher was uploaded under its content's hash, and the task reads it through a URL
    // that lives as long as the bundle's.
    const key = launcherKey(LAUNCHER);
    assert.match(key, /^service-programs\/service-app-launcher-[0-9a-f]{16}\.cjs$/);
    assert.equal(bucket.objects.get(key)?.toString('utf8'), LAUNCHER);
    assert.equal(env.AGENTHOST_LAUNCHER_URL, await bucket.presign('GET', key, SERVICE_BUNDLE_URL_SECONDS));
    assert.equal(env.APP_TOKEN, undefined, 'secret values never in the task definition');

    assert.deepEqual(elb.commandCalls(CreateTargetGroupCommand)[0]?.args[0].input, {
      Name: 'svc-3f6c1d2e8a9b4c7d9e0f1a2b3c4d',
      Protocol: 'HTTP',
      Port: 8080,
      VpcId: 'vpc-1',
      TargetType: 'ip',
      HealthCheckProtocol: 'HTTP',
      HealthCheckPath: '/health',
      HealthCheckIntervalSeconds: 10,
      HealthyThresholdCount: 2,
      UnhealthyThresholdCount: 3,
      Matcher: { HttpCode: '200' },
    });
    assert.deepEqual(elb.commandCalls(CreateRuleCommand)[0]?.args[0].input, {
      ListenerArn: LISTENER,
      Priority: rulePriority(SERVICE_ID),
      Conditions: [
        { Field: 'host-header', HostHeaderConfig: { Values: ['web-9e6d5062.services.example.com'] } },
      ],
      Actions: [{ Type: 'forward', TargetGroupArn: TG_ARN }],
      Tags: [{ Key: 'agenthost:service', Value: SERVICE_ID }],
    });
    assert.deepEqual(ecs.commandCalls(CreateServiceCommand)[0]?.args[0].input, {
      cluster: 'agenthost-services',
      serviceName: `svc-${SERVICE_ID}`,
      taskDefinition: 'arn:td:1',
      desiredCount: 2,
      launchType: 'FARGATE',
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: ['subnet-a', 'subnet-b'],
          securityGroups: ['sg-tasks'],
          assignPublicIp: 'DISABLED',
        },
      },
      loadBalancers: [{ targetGroupArn: TG_ARN, containerName: 'gateway', containerPort: 8080 }],
      healthCheckGracePeriodSeconds: 60,
      deploymentConfiguration: {
        minimumHealthyPercent: 100,
        maximumPercent: 200,
        deploymentCircuitBreaker: { enable: false, rollback: false },
      },
      enableECSManagedTags: true,
      propagateTags: 'TASK_DEFINITION',
      tags: [{ key: 'agenthost:service', value: SERVICE_ID }],
    });
    assert.deepEqual(scaling.commandCalls(RegisterScalableTargetCommand)[0]?.args[0].input, {
      ServiceNamespace: 'ecs',
      ResourceId: `service/agenthost-services/svc-${SERVICE_ID}`,
      ScalableDimension: 'ecs:service:DesiredCount',
      MinCapacity: 2,
      MaxCapacity: 3,
    });
  });

  it('restarts an existing service with a new task definition revision and keeps its rule', async () => {
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:2' } });
    ecs.on(DescribeServicesCommand).resolves({ services: [{ status: 'ACTIVE' }] });
    elb.on(CreateTargetGroupCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    elb
      .on(DescribeRulesCommand)
      .resolves({ Rules: [{ RuleArn: 'arn:rule', Actions: [{ Type: 'forward', TargetGroupArn: TG_ARN }] }] });
    await runner().start(launch);
    assert.deepEqual(ecs.commandCalls(UpdateServiceCommand)[0]?.args[0].input, {
      cluster: 'agenthost-services',
      service: `svc-${SERVICE_ID}`,
      taskDefinition: 'arn:td:2',
      desiredCount: 2,
      forceNewDeployment: true,
    });
    assert.equal(ecs.commandCalls(CreateServiceCommand).length, 0);
    assert.equal(elb.commandCalls(CreateRuleCommand).length, 0);
  });

  it('pauses with no tasks and a 0/0 scaling target; deletes everything on remove', async () => {
    ecs.on(DescribeServicesCommand).resolves({ services: [{ status: 'ACTIVE' }] });
    await runner().stop(SERVICE_ID);
    assert.deepEqual(ecs.commandCalls(UpdateServiceCommand)[0]?.args[0].input, {
      cluster: 'agenthost-services',
      service: `svc-${SERVICE_ID}`,
      desiredCount: 0,
    });
    assert.deepEqual(
      scaling
        .commandCalls(RegisterScalableTargetCommand)
        .map((c) => [c.args[0].input.MinCapacity, c.args[0].input.MaxCapacity]),
      [[0, 0]],
    );
    elb
      .on(DescribeRulesCommand)
      .resolves({ Rules: [{ RuleArn: 'arn:rule', Actions: [{ Type: 'forward', TargetGroupArn: TG_ARN }] }] });
    elb.on(DescribeTargetGroupsCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    await runner().stop(SERVICE_ID, { remove: true });
    assert.equal(scaling.commandCalls(DeregisterScalableTargetCommand).length, 1);
    assert.deepEqual(ecs.commandCalls(DeleteServiceCommand)[0]?.args[0].input, {
      cluster: 'agenthost-services',
      service: `svc-${SERVICE_ID}`,
      force: true,
    });
    assert.deepEqual(elb.commandCalls(DeleteRuleCommand)[0]?.args[0].input, { RuleArn: 'arn:rule' });
    assert.deepEqual(elb.commandCalls(DeleteTargetGroupCommand)[0]?.args[0].input, {
      TargetGroupArn: TG_ARN,
    });
  });

  it('reads the app’s log lines from CloudWatch Logs with levels', async () => {
    cwl.on(FilterLogEventsCommand).resolves({
      events: [
        { timestamp: Date.parse('2026-11-22T01:00:00Z'), message: '[platform] starting: node server.mjs' },
        { timestamp: Date.parse('2026-11-22T01:00:01Z'), message: 'listening on 3000' },
        { timestamp: Date.parse('2026-11-22T01:00:02Z'), message: 'Error: upstream refused' },
      ],
    });
    const lines = await runner().logs(SERVICE_ID, {
      limit: 10,
      since: '2026-11-22T00:59:30Z',
      until: '2026-11-22T01:00:10Z',
    });
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'info', 'error'],
    );
    // The range fits in the first window (a minute back from until): one read.
    assert.deepEqual(cwl.commandCalls(FilterLogEventsCommand)[0]?.args[0].input, {
      logGroupName: 'agenthost-services',
      logStreamNamePrefix: `app/${SERVICE_ID}`,
      startTime: Date.parse('2026-11-22T00:59:30Z'),
      endTime: Date.parse('2026-11-22T01:00:10Z'),
      nextToken: undefined,
    });
    const errors = await runner().logs(SERVICE_ID, {
      limit: 10,
      level: 'warn',
      since: '2026-11-22T00:59:30Z',
      until: '2026-11-22T01:00:10Z',
    });
    assert.deepEqual(
      errors.map((l) => l.message),
      ['[platform] starting: node server.mjs', 'Error: upstream refused'],
      'level is the lowest severity: warn and error',
    );
  });

  it('finds the newest lines of a long log by reading back from until, in few requests', async () => {
    // 30,000 lines, one a second, served as CloudWatch does: forward in time, 1,000 a page.
    const t0 = Date.parse('2026-11-01T00:00:00Z');
    const events = Array.from({ length: 30_000 }, (_, i) => ({
      timestamp: t0 + i * 1000,
      message: `line ${i}`,
    }));
    cwl
      .on(FilterLogEventsCommand)
      .callsFake((input: { startTime?: number; endTime?: number; nextToken?: string }) => {
        const inRange = events.filter(
          (e) =>
            e.timestamp >= (input.startTime ?? 0) &&
            e.timestamp <= (input.endTime ?? Number.MAX_SAFE_INTEGER),
        );
        const from = Number(input.nextToken ?? 0);
        const page = inRange.slice(from, from + 1000);
        return { events: page, ...(from + 1000 < inRange.length ? { nextToken: String(from + 1000) } : {}) };
      });
    const until = new Date(t0 + 29_999 * 1000).toISOString();
    const newest = await runner().logs(SERVICE_ID, { limit: 3, until });
    assert.deepEqual(
      newest.map((l) => l.message),
      ['line 29997', 'line 29998', 'line 29999'],
    );
    assert.equal(cwl.commandCalls(FilterLogEventsCommand).length, 1, 'the first minute held them');
    cwl.resetHistory();
    const spread = await runner().logs(SERVICE_ID, { limit: 500, until, since: new Date(t0).toISOString() });
    assert.deepEqual(spread.at(0)?.message, 'line 29500');
    assert.deepEqual(spread.at(-1)?.message, 'line 29999');
    assert.ok(cwl.commandCalls(FilterLogEventsCommand).length <= 6, 'windows of 1, 4 and 16 minutes');
  });
});

describe('ECS task state change events drive supervision (jobs/service-events.ts)', () => {
  let p: TestPlatform;
  let receiver: AlertReceiver;
  const stops: string[] = [];
  before(async () => {
    receiver = await startAlertReceiver();
    p = await startTestPlatform({}, 'sqlite', { notifier: fastNotifier() }, { inMemory: true });
  });
  after(async () => {
    await p.close();
    await receiver.close();
  });

  const event = (detail: Record<string, unknown>) => ({
    'detail-type': 'ECS Task State Change',
    detail: { group: `service:svc-${SERVICE_ID}`, clusterArn: 'arn:cluster', ...detail },
  });

  it('ready on RUNNING+HEALTHY; a crash counts, warns at half, pauses at the maximum (desired count 0)', async () => {
    const o = await createAccount(p.deps, { org: 'ecsev', tier: 'pro' });
    const now = new Date().toISOString();
    const s: Service = {
      id: SERVICE_ID,
      workspace_id: o.workspace_id,
      name: 'web',
      agent: 'ecsev/web',
      agent_version: 'v1',
      auto_update: true,
      state: 'provisioning',
      paused_reason: null,
      crash_loop: false,
      health_status: 'starting',
      restart_count: 0,
      consecutive_restart_failures: 0,
      max_restart_failures: 4,
      crash_warning_sent: false,
      min_instances: 1,
      max_instances: 1,
      url: 'https://web-x.services.example.com',
      command: null,
      http: true,
      env: {},
      extra_secrets: [],
      secrets: [],
      alert_webhook_url: receiver.url,
      last_error: null,
      deployed_at: now,
      last_restart_at: null,
      created_by: o.account.id,
      created_at: now,
      updated_at: now,
    };
    await p.deps.store.put(serviceItem(s, 1, null));
    const deps = {
      ...p.deps,
      serviceRunner: {
        ...p.deps.serviceRunner,
        kind: 'ecs' as const,
        stop: async (id: string) => void stops.push(id),
      },
    };
    assert.equal(
      await handleTaskEvent(deps, event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY' })),
      'ready',
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.state, 'running');
    // A deployment replacing a task is not a crash.
    assert.equal(
      await handleTaskEvent(
        deps,
        event({
          lastStatus: 'STOPPED',
          stopCode: 'ServiceSchedulerInitiated',
          containers: [{ name: 'app', exitCode: 0 }],
        }),
      ),
      'ignored',
    );
    // Nor is the app's exit by the stop's SIGTERM (143: the launcher passes it on to the app).
    assert.equal(
      await handleTaskEvent(
        deps,
        event({
          lastStatus: 'STOPPED',
          stopCode: 'ServiceSchedulerInitiated',
          stoppedReason: 'Scaling activity initiated by (deployment ecs-svc/1234567890)',
          containers: [
            { name: 'gateway', exitCode: 0 },
            { name: 'app', exitCode: 143 },
          ],
        }),
      ),
      'ignored',
    );
    const crash = event({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      startedAt: '2026-11-22T01:00:00Z',
      stoppedAt: '2026-11-22T01:00:05Z',
      containers: [
        { name: 'gateway', exitCode: 0 },
        { name: 'app', exitCode: 1 },
      ],
    });
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    const conflict = event({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      containers: [{ name: 'app', exitCode: 98 }],
    });
    assert.equal(await handleTaskEvent(deps, conflict), 'paused');
    assert.deepEqual(stops, [SERVICE_ID]);
    const after = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(after?.state, 'paused');
    assert.equal(after?.crash_loop, true);
    assert.match(String(after?.last_error), /8080/);
    const alerts = await receiver.waitFor(2);
    assert.deepEqual(
      alerts.map((a) => a.body.severity),
      ['warning', 'critical'],
    );
    // A task that had stayed up past the healthy period starts a new streak.
    await p.deps.store.put(
      serviceItem({ ...s, state: 'running', consecutive_restart_failures: 3 }, 50, null),
    );
    await handleTaskEvent(
      deps,
      event({
        lastStatus: 'STOPPED',
        startedAt: '2026-11-22T00:00:00Z',
        stoppedAt: '2026-11-22T02:00:00Z',
        containers: [{ name: 'app', exitCode: 1 }],
      }),
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.consecutive_restart_failures, 1);
  });

  it('a late report of a task created before the latest launch changes nothing (an owner restarted it meanwhile)', async () => {
    const stored = await loadStoredService(p.deps, SERVICE_ID);
    assert.ok(stored);
    // The owner's restart of a crash-looped service: provisioning, the counter cleared, launched at L.
    const launchedAt = '2026-11-22T03:00:00.000Z';
    const resumed = {
      ...stored.service,
      state: 'provisioning' as const,
      health_status: 'starting' as const,
      paused_reason: null,
      crash_loop: false,
      consecutive_restart_failures: 0,
    };
    await p.deps.store.put(serviceItem(resumed, 100, null, launchedAt));
    stops.length = 0;
    const deps = {
      ...p.deps,
      serviceRunner: { ...p.deps.serviceRunner, stop: async (id: string) => void stops.push(id) },
    };
    const timeline = async () =>
      (await p.deps.store.query({ pk: serviceEventKeys.ofService(SERVICE_ID), limit: 1000 })).items.length;
    const eventsBefore = await timeline();
    const crashOf = (createdAt: string) =>
      event({
        lastStatus: 'STOPPED',
        stopCode: 'EssentialContainerExited',
        createdAt,
        startedAt: createdAt,
        stoppedAt: '2026-11-22T03:00:20Z',
        containers: [{ name: 'app', exitCode: 1 }],
      });
    // The crash-looped launch's last task, created a second before the restart, reported after it.
    assert.equal(await handleTaskEvent(deps, crashOf('2026-11-22T02:59:59.000Z')), 'ignored');
    assert.equal(
      await handleTaskEvent(
        deps,
        event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY', createdAt: '2026-11-22T02:59:59.000Z' }),
      ),
      'ready',
    );
    let now = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(now?.consecutive_restart_failures, 0, 'an earlier launch counts no failure');
    assert.equal(now?.state, 'provisioning', 'nor makes this launch ready');
    assert.equal(now?.restart_count, resumed.restart_count);
    assert.deepEqual(stops, [], 'the resumed service is not stopped');
    assert.equal(await timeline(), eventsBefore, 'no timeline entry');
    // This launch's task (created after L): its reports count.
    assert.equal(
      await handleTaskEvent(
        deps,
        event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY', createdAt: '2026-11-22T03:00:01.000Z' }),
      ),
      'ready',
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.state, 'running');
    assert.equal(await handleTaskEvent(deps, crashOf('2026-11-22T03:00:01.000Z')), 'crash');
    now = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(now?.consecutive_restart_failures, 1);
    assert.equal(now?.restart_count, resumed.restart_count + 1);
  });
});

describe('the task programs, bundled as shipped, run here as the task definition starts them', () => {
  const SECRET = 'task-secret-0123456789';
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  const tempDir = async (prefix: string) => {
    const d = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const free = async () => {
    const s = createServer().listen(0, '127.0.0.1');
    await once(s, 'listening');
    const port = (s.address() as AddressInfo).port;
    s.close();
    return port;
  };
  const zipOf = async (files: Record<string, string>) => {
    const zip = new ZipFile();
    for (const [name, text] of Object.entries(files)) zip.addBuffer(Buffer.from(text), name);
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const tarOf = async (files: Record<string, string>) => {
    const dir = await tempDir('agenthost-ecs-src-');
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return (await packDirectory(dir)).data;
  };

  /**
   * Starts the service through the runner (mocked ECS, the loopback bucket) and returns its two
   * containers' commands and environments from the registered task definition, with the bundle
   * stored in the bucket under `bundleKey`.
   */
  async function taskOf(bundle: Buffer, format: 'tar.gz' | 'zip', over: Partial<ServiceLaunch> = {}) {
    ecs.reset();
    elb.reset();
    scaling.reset();
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:1' } });
    ecs.on(DescribeServicesCommand).resolves({ services: [] });
    elb.on(CreateTargetGroupCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    elb.on(DescribeRulesCommand).resolves({ Rules: [] });
    const bundleKey = `bundles/test/${Math.random().toString(36).slice(2)}.${format}`;
    bucket.objects.set(bundleKey, bundle);
    await runner().start({
      ...launch,
      bundle: { data: Buffer.alloc(0), format },
      bundleUrl: await bucket.presign('GET', bundleKey, SERVICE_BUNDLE_URL_SECONDS),
      ...over,
    });
    const td = ecs.commandCalls(RegisterTaskDefinitionCommand)[0]?.args[0].input;
    const [gateway, app] = td?.containerDefinitions ?? [];
    const envOf = (c: typeof gateway) =>
      Object.fromEntries((c?.environment ?? []).map((e) => [e.name as string, e.value as string]));
    return {
      gateway: { command: gateway?.command as string[], env: envOf(gateway) },
      app: { command: app?.command as string[], env: envOf(app) },
    };
  }

  /** Runs a container's command (`node -e …`) on this host; ECS would add the secret values. */
  function runContainer(command: string[], env: Record<string, string>) {
    assert.equal(command[0], 'node');
    const child = spawn(process.execPath, command.slice(1), {
      env: { PATH: process.env.PATH, ...env },
      stdio: 'pipe',
    });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  const withTimeout = <T>(p: Promise<T>, ms = 30_000) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms)),
    ]);

  it('tar.gz: the gateway answers /health 503 then 200 and proxies; the app is found, started and its secrets redacted, encoded too', async (t) => {
    const task = await taskOf(
      await tarOf({
        'server.mjs': [
          "import { createServer } from 'node:http';",
          "console.log('token is ' + process.env.APP_TOKEN);",
          "console.log('b64 ' + Buffer.from('x:' + process.env.APP_TOKEN).toString('base64'));",
          "console.log('hex ' + Buffer.from(process.env.APP_TOKEN).toString('hex'));",
          "console.log('launcher vars: ' + Object.keys(process.env).filter((k) => k.startsWith('AGENTHOST_')).join(','));",
          "setTimeout(() => createServer((q, r) => r.end(JSON.stringify({ via: 'app', path: q.url, greeting: process.env.GREETING }))).listen(Number(process.env.PORT), '127.0.0.1'), 500);",
        ].join('\n'),
      }),
      'tar.gz',
    );
    const [gatewayPort, appPort] = [await free(), await free()];
    const gateway = runContainer(task.gateway.command, {
      ...task.gateway.env,
      PLATFORM_HTTP_PORT: String(appPort),
      [GATEWAY_PORT_ENV]: String(gatewayPort),
    });
    const app = runContainer(task.app.command, {
      ...task.app.env,
      PORT: String(appPort),
      PLATFORM_HTTP_PORT: String(appPort),
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
      APP_TOKEN: SECRET,
    });
    try {
      let sawStarting = false;
      let body = '';
      for (let i = 0; i < 300; i++) {
        const r = await fetch(`http://127.0.0.1:${gatewayPort}/health`).catch(() => undefined);
        if (r?.status === 503) sawStarting = true;
        if (r?.status === 200) {
          body = await (await fetch(`http://127.0.0.1:${gatewayPort}/hello?x=1`)).text();
          break;
        }
        await new Promise((res) => setTimeout(res, 50));
      }
      t.diagnostic(`app output: ${app.output().trim().replace(/\n/g, ' | ')}`);
      assert.ok(sawStarting, 'the gateway said 503 before the app listened');
      assert.deepEqual(JSON.parse(body), { via: 'app', path: '/hello?x=1', greeting: 'hi' });
      const out = app.output();
      assert.match(out, /\[platform\] starting: node server\.mjs/);
      assert.match(out, /token is \[REDACTED\]/);
      assert.match(out, /hex \[REDACTED\]/);
      assert.ok(!out.includes(SECRET), 'no plain secret');
      assert.ok(!out.includes(Buffer.from(SECRET).toString('hex')), 'no hex secret');
      assert.ok(
        !Buffer.from(out.match(/b64 (\S+)/)?.[1] ?? '', 'base64')
          .toString()
          .includes(SECRET),
      );
      assert.match(out, /launcher vars: \n/, 'the launcher’s variables are not the app’s');
      // The task fetched the launcher and the bundle through the presigned URLs.
      assert.ok(bucket.requests.some((r) => r.method === 'GET' && r.key === launcherKey(LAUNCHER)));
    } finally {
      // SIGTERM, as ECS stops a task: the launcher passes it on to the app's process group.
      gateway.child.kill();
      app.child.kill();
      assert.equal(await withTimeout(app.exited, 10_000), 143, 'the launcher exits with the app');
      await withTimeout(gateway.exited, 10_000);
    }
  });

  it('zip: unpacked with the same extraction, the auto-scan finds index.js, and the app’s exit status is the task’s', async () => {
    const task = await taskOf(
      await zipOf({
        'lib/value.txt': '42',
        'index.js': [
          "const v = require('node:fs').readFileSync('lib/value.txt', 'utf8');",
          "console.error('value ' + v + ' and ' + encodeURIComponent(process.env.APP_TOKEN));",
          'process.exit(3);',
        ].join('\n'),
      }),
      'zip',
      { http: false },
    );
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
      APP_TOKEN: `${SECRET}/?&`,
    });
    assert.equal(await withTimeout(app.exited), 3, app.output());
    assert.match(app.output(), /\[platform\] starting: node index\.js/);
    assert.match(app.output(), /value 42 and \[REDACTED\]/);
  });

  it('an app that fails on port 8080 ends the task with the port-conflict status; so does a gateway whose port is taken', async () => {
    const task = await taskOf(
      await tarOf({
        'app.js':
          "console.error('Error: listen EADDRINUSE: address already in use 0.0.0.0:8080'); process.exit(1);",
      }),
      'tar.gz',
    );
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
    });
    assert.equal(await withTimeout(app.exited), PORT_CONFLICT_EXIT, app.output());
    assert.match(app.output(), /port 8080 belongs to the service gateway/);

    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const gateway = runContainer(task.gateway.command, {
        ...task.gateway.env,
        [GATEWAY_PORT_ENV]: String((taken.address() as AddressInfo).port),
      });
      assert.equal(await withTimeout(gateway.exited), PORT_CONFLICT_EXIT, gateway.output());
      assert.match(gateway.output(), /port 8080 is taken/);
    } finally {
      taken.close();
    }
  });

  it('no entrypoint is its own status; a launcher that cannot be downloaded says so', async () => {
    const task = await taskOf(await tarOf({ 'README.md': 'nothing to run' }), 'tar.gz', { command: null });
    const app = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_APP_DIR: join(await tempDir('agenthost-ecs-app-'), 'app'),
    });
    assert.equal(await withTimeout(app.exited), NO_ENTRYPOINT_EXIT, app.output());
    assert.match(app.output(), /\[platform\] no entrypoint: .*main\.py/);

    const missing = runContainer(task.app.command, {
      ...task.app.env,
      AGENTHOST_LAUNCHER_URL: `${bucket.url}/service-programs/missing.cjs`,
    });
    assert.equal(await withTimeout(missing.exited), LAUNCH_FAILED_EXIT, missing.output());
    assert.match(
      missing.output(),
      /\[platform\] the launcher could not start: launcher download failed with HTTP 404/,
    );
  });
});

describe('deploying a service through the API on an AWS deployment', () => {
  const s3 = mockClient(S3Client);
  let p: TestPlatform;
  let programs: string;
  const realFetch = globalThis.fetch;
  /** The launcher uploads, which go to S3 through presigned URLs (answered here, never sent). */
  const uploads: { url: URL; body: string }[] = [];
  before(async () => {
    // The stack writes the bundled programs into the function's asset (lib/container-programs.ts).
    programs = await mkdtemp(join(tmpdir(), 'agenthost-programs-'));
    await writeFile(join(programs, 'service-gateway.cjs'), GATEWAY);
    await writeFile(join(programs, 'service-app-launcher.cjs'), LAUNCHER);
    globalThis.fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === '127.0.0.1') return realFetch(input, init);
      assert.equal(init?.method, 'PUT', `only the launcher upload leaves the platform: ${url}`);
      assert.match(url.hostname, /\.s3\.[a-z0-9-]+\.amazonaws\.com$/);
      uploads.push({ url, body: String(init?.body) });
      return new Response(null, { status: 200 });
    };
    p = await startTestPlatform(
      {
        PLATFORM_SERVICES_GATEWAY_FILE: join(programs, 'service-gateway.cjs'),
        PLATFORM_SERVICES_LAUNCHER_FILE: join(programs, 'service-app-launcher.cjs'),
        PLATFORM_SERVICES_CLUSTER: 'agenthost-services',
        PLATFORM_SERVICES_SUBNETS: 'subnet-a,subnet-b',
        PLATFORM_SERVICES_SECURITY_GROUPS: 'sg-tasks',
        PLATFORM_SERVICES_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/svc-exec',
        PLATFORM_SERVICES_LISTENER_ARN: LISTENER,
        PLATFORM_SERVICES_VPC_ID: 'vpc-1',
        PLATFORM_SERVICES_DOMAIN: 'services.example.com',
        PLATFORM_SERVICES_LOG_GROUP: 'agenthost-services',
        PLATFORM_SERVICES_IMAGE: 'public.ecr.aws/docker/library/node:24-bookworm-slim',
      },
      'dynamodb',
      {},
      { inMemory: true },
    );
  });
  after(async () => {
    await p.close();
    s3.restore();
    globalThis.fetch = realFetch;
    await rm(programs, { recursive: true, force: true });
  });

  it('deploys (it was refused with 422 on every AWS deployment): the ECS service is created', async () => {
    for (const m of [ecs, elb, scaling, cwl]) m.reset();
    s3.on(PutObjectCommand).resolves({});
    ecs.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:1' } });
    ecs.on(DescribeServicesCommand).resolves({ services: [] });
    ecs.on(CreateServiceCommand).resolves({});
    elb.on(CreateTargetGroupCommand).resolves({ TargetGroups: [{ TargetGroupArn: TG_ARN }] });
    elb.on(DescribeRulesCommand).resolves({ Rules: [] });
    elb.on(CreateRuleCommand).resolves({});
    scaling.on(RegisterScalableTargetCommand).resolves({});

    const o = await p.createAccount('ecsapi', 'pro');
    const agent = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: o.key,
      body: {
        name: 'web',
        type: 'tool',
        description: 'A web app',
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        run_mode: 'always_on',
        timeout_seconds: 0,
      },
    });
    assert.equal(agent.status, 201, agent.text);
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-ecsapi-'));
    await writeFile(join(dir, 'server.mjs'), 'console.log(1)');
    const { data } = await packDirectory(dir);
    await rm(dir, { recursive: true, force: true });
    const up = await p.request('POST', `/agents/${agent.body.id}/upload`, {
      key: o.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);

    const res = await p.request<{ id: string; url: string; state: string }>(
      'POST',
      `/workspaces/${o.workspaceId}/services`,
      { key: o.key, body: { agent: 'ecsapi/web', name: 'web' } },
    );
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.url, /^https:\/\/web-[0-9a-f]{8}\.services\.example\.com$/);
    await waitFor(
      'the service created',
      () => ecs.commandCalls(CreateServiceCommand).length === 1 || undefined,
      10_000,
      50,
    );
    const created = ecs.commandCalls(CreateServiceCommand)[0]?.args[0].input;
    assert.equal(created?.serviceName, `svc-${res.body.id}`);
    // The launcher went to the bundle bucket through a presigned PUT, and the task definition
    // carries the gateway from the function's asset and a presigned GET of the launcher.
    assert.equal(uploads.length, 1);
    assert.equal(uploads[0]?.url.pathname, `/${launcherKey(LAUNCHER)}`);
    assert.equal(uploads[0]?.url.searchParams.get('x-id'), 'PutObject');
    assert.equal(uploads[0]?.body, LAUNCHER);
    const td = ecs.commandCalls(RegisterTaskDefinitionCommand)[0]?.args[0].input;
    assert.deepEqual(td?.containerDefinitions?.[0]?.command, ['node', '-e', GATEWAY]);
    const launcherUrl = new URL(
      String(
        td?.containerDefinitions?.[1]?.environment?.find((e) => e.name === 'AGENTHOST_LAUNCHER_URL')?.value,
      ),
    );
    assert.equal(launcherUrl.pathname, `/${launcherKey(LAUNCHER)}`);
    assert.equal(launcherUrl.searchParams.get('X-Amz-Expires'), String(SERVICE_BUNDLE_URL_SECONDS));
  });
});

describe('an AWS deployment without the services settings', () => {
  it('refuses a deploy with 422, naming what is not set, and records nothing', async () => {
    const p = await startTestPlatform({}, 'dynamodb', {}, { inMemory: true });
    try {
      const o = await p.createAccount('ecsnone', 'pro');
      const res = await p.request('POST', `/workspaces/${o.workspaceId}/services`, {
        key: o.key,
        body: { agent: 'ecsnone/web', name: 'web' },
      });
      assert.equal(res.status, 422, res.text);
      assert.match(res.text, /not set up on this deployment \(PLATFORM_SERVICES_CLUSTER, /);
      const list = await p.request<{ services: unknown[] }>('GET', `/workspaces/${o.workspaceId}/services`, {
        key: o.key,
      });
      assert.deepEqual(list.body.services, []);
    } finally {
      await p.close();
    }
  });
});
