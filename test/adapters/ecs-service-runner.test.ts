/**
 * The ECS service runner (functions/adapters/aws/ecs-service-runner.ts) against mocked AWS clients:
 * what it sends to start, restart, pause and remove a service and to read its logs; a deploy through
 * the API on an AWS deployment, with and without the services settings. Supervision by task state
 * events: ecs-service-events.test.ts; the task programs: ecs-service-task-programs.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  DeregisterScalableTargetCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
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
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { rulePriority } from '../../functions/adapters/aws/ecs-service-load-balancing.ts';
import { launcherKey } from '../../functions/adapters/aws/ecs-service-names.ts';
import { packDirectory } from '../../functions/cli/pack.ts';
import { SERVICE_APP_BOOTSTRAP } from '../../functions/containers/service-protocol.ts';
import { SERVICE_BUNDLE_URL_SECONDS } from '../../functions/ports/service-runner.ts';
import {
  bucket,
  cwl,
  ecs,
  elb,
  GATEWAY,
  LAUNCHER,
  LISTENER,
  launch,
  runner,
  SERVICE_ID,
  scaling,
  TG_ARN,
  WS,
} from '../helpers/ecs-service-bench.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

before(() => bucket.start());
after(() => bucket.close());

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
