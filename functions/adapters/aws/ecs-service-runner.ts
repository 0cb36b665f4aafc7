import {
  type ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { type CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
  type ECSClient,
  RegisterTaskDefinitionCommand,
  type RegisterTaskDefinitionCommandInput,
  UpdateServiceCommand,
} from '@aws-sdk/client-ecs';
import {
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeleteRuleCommand,
  DeleteTargetGroupCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  type ElasticLoadBalancingV2Client,
  PriorityInUseException,
  TargetGroupNotFoundException,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ENTRYPOINT_SCAN } from '../../core/services/entrypoint.ts';
import type { ServiceLaunch, ServiceRunner, SupervisionHooks } from '../../ports/service-runner.ts';
import { ARCHIVE_SOURCE } from './archive-source.ts';

/** The gateway's port in the task (spec) and the app's default port. */
export const GATEWAY_PORT = 8080;
export const APP_PORT = 3000;
/** The exit status both task-side scripts use when the app took the gateway's port. */
export const PORT_CONFLICT_EXIT = 98;

export interface EcsServiceRunnerOptions {
  ecs: ECSClient;
  elb: ElasticLoadBalancingV2Client;
  autoscaling: ApplicationAutoScalingClient;
  logs: CloudWatchLogsClient;
  cluster: string;
  subnets: string[];
  securityGroups: string[];
  /** Pulls the image, writes the log group, reads the deployment's secrets (and nothing else). */
  executionRoleArn: string;
  /** The HTTPS listener of the services' load balancer. */
  listenerArn: string;
  vpcId: string;
  /** Service URLs are https://<name>-<workspace prefix>.<domain>. */
  domain: string;
  logGroup: string;
  region: string;
  image: string;
  /** Secrets Manager name prefix (PLATFORM_SECRETS_PREFIX) and the account, for valueFrom ARNs. */
  secretsPrefix: string;
  account: string;
  partition?: string;
}

/** ECS names of a service's resources. */
export function ecsNames(serviceId: string) {
  const compact = serviceId.replace(/-/g, '');
  return {
    service: `svc-${serviceId}`,
    family: `agenthost-svc-${serviceId}`,
    targetGroup: `svc-${compact.slice(0, 28)}`,
  };
}

/** The service's public host name: its name and the first 8 characters of its workspace id. */
export function serviceHost(name: string, workspaceId: string, domain: string): string {
  return `${name}-${workspaceId.replace(/-/g, '').slice(0, 8)}.${domain}`;
}

/**
 * The service runner on ECS Fargate (docs/services.md): one task definition revision per start
 * (the gateway container on 8080 answering /health and proxying to the app on 3000; the app
 * container downloading the bundle through a fresh signed URL, installing, finding its entrypoint
 * and redacting secret values from its output), secrets by reference to Secrets Manager (never
 * values in the task definition), no task role, one ECS service (desired count = min_instances)
 * with an Application Auto Scaling target up to max_instances, and a target group plus a
 * host-header rule on the shared HTTPS listener. Crashes arrive as ECS task state change events
 * (functions/jobs/service-events.ts); ECS starts replacement tasks itself, and a pause sets the
 * desired count to 0.
 */
export class EcsServiceRunner implements ServiceRunner {
  readonly kind = 'ecs' as const;
  private readonly o: EcsServiceRunnerOptions;

  constructor(options: EcsServiceRunnerOptions) {
    this.o = options;
  }

  bind(_hooks: SupervisionHooks): void {
    // Supervision runs in the ECS events function, not in this process.
  }

  taskDefinition(launch: ServiceLaunch): RegisterTaskDefinitionCommandInput {
    const n = ecsNames(launch.serviceId);
    const partition = this.o.partition ?? 'aws';
    const secretNames = [...launch.secretNames].sort();
    const plain = Object.entries(launch.env)
      .filter(([k]) => !secretNames.includes(k))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => ({ name, value }));
    const logs = (prefix: string) => ({
      logDriver: 'awslogs' as const,
      options: {
        'awslogs-group': this.o.logGroup,
        'awslogs-region': this.o.region,
        'awslogs-stream-prefix': `${prefix}/${launch.serviceId}`,
      },
    });
    return {
      family: n.family,
      requiresCompatibilities: ['FARGATE'],
      networkMode: 'awsvpc',
      cpu: '512',
      memory: '1024',
      runtimePlatform: { cpuArchitecture: 'ARM64', operatingSystemFamily: 'LINUX' },
      executionRoleArn: this.o.executionRoleArn,
      containerDefinitions: [
        {
          name: 'gateway',
          image: this.o.image,
          essential: true,
          command: ['node', '-e', GATEWAY_SOURCE],
          portMappings: [{ containerPort: GATEWAY_PORT, protocol: 'tcp' }],
          environment: [
            { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
            { name: 'AGENTHOST_HTTP', value: String(launch.http) },
          ],
          healthCheck: {
            command: [
              'CMD-SHELL',
              `node -e "fetch('http://127.0.0.1:${GATEWAY_PORT}/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"`,
            ],
            interval: 10,
            timeout: 5,
            retries: 3,
            startPeriod: 60,
          },
          readonlyRootFilesystem: true,
          user: '1000',
          logConfiguration: logs('gateway'),
        },
        {
          name: 'app',
          image: this.o.image,
          essential: true,
          command: ['node', '-e', SERVICE_APP_SOURCE],
          dependsOn: [{ containerName: 'gateway', condition: 'START' }],
          environment: [
            ...plain,
            { name: 'PORT', value: String(APP_PORT) },
            { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
            { name: 'AGENTHOST_BUNDLE_URL', value: launch.bundleUrl ?? '' },
            { name: 'AGENTHOST_BUNDLE_FORMAT', value: launch.bundle?.format ?? 'tar.gz' },
            { name: 'AGENTHOST_COMMAND', value: launch.command ?? '' },
            { name: 'AGENTHOST_SECRET_NAMES', value: secretNames.join(',') },
          ],
          secrets: secretNames.map((name) => ({
            name,
            valueFrom: `arn:${partition}:secretsmanager:${this.o.region}:${this.o.account}:secret:${this.o.secretsPrefix}/${launch.workspaceId}/${name}`,
          })),
          user: '1000',
          logConfiguration: logs('app'),
        },
      ],
      tags: [
        { key: 'agenthost:service', value: launch.serviceId },
        { key: 'agenthost:workspace', value: launch.workspaceId },
      ],
    };
  }

  async start(launch: ServiceLaunch): Promise<{ url: string; port: number | null }> {
    const n = ecsNames(launch.serviceId);
    const host = serviceHost(launch.name, launch.workspaceId, this.o.domain);
    const registered = await this.o.ecs.send(new RegisterTaskDefinitionCommand(this.taskDefinition(launch)));
    const taskDefinitionArn = registered.taskDefinition?.taskDefinitionArn;
    if (!taskDefinitionArn) throw new Error('RegisterTaskDefinition returned no ARN');
    const targetGroupArn = await this.ensureTargetGroup(n.targetGroup);
    await this.ensureRule(host, targetGroupArn, launch.serviceId);
    const existing = await this.o.ecs.send(
      new DescribeServicesCommand({ cluster: this.o.cluster, services: [n.service] }),
    );
    const live = existing.services?.find((s) => s.status === 'ACTIVE');
    if (live) {
      await this.o.ecs.send(
        new UpdateServiceCommand({
          cluster: this.o.cluster,
          service: n.service,
          taskDefinition: taskDefinitionArn,
          desiredCount: launch.instances.min,
          forceNewDeployment: true,
        }),
      );
    } else {
      await this.o.ecs.send(
        new CreateServiceCommand({
          cluster: this.o.cluster,
          serviceName: n.service,
          taskDefinition: taskDefinitionArn,
          desiredCount: launch.instances.min,
          launchType: 'FARGATE',
          networkConfiguration: {
            awsvpcConfiguration: {
              subnets: this.o.subnets,
              securityGroups: this.o.securityGroups,
              assignPublicIp: 'DISABLED',
            },
          },
          loadBalancers: [{ targetGroupArn, containerName: 'gateway', containerPort: GATEWAY_PORT }],
          healthCheckGracePeriodSeconds: 60,
          deploymentConfiguration: {
            minimumHealthyPercent: 100,
            maximumPercent: 200,
            deploymentCircuitBreaker: { enable: false, rollback: false },
          },
          enableECSManagedTags: true,
          propagateTags: 'TASK_DEFINITION',
          tags: [{ key: 'agenthost:service', value: launch.serviceId }],
        }),
      );
    }
    await this.o.autoscaling.send(
      new RegisterScalableTargetCommand({
        ServiceNamespace: 'ecs',
        ResourceId: `service/${this.o.cluster}/${n.service}`,
        ScalableDimension: 'ecs:service:DesiredCount',
        MinCapacity: launch.instances.min,
        MaxCapacity: launch.instances.max,
      }),
    );
    return { url: `https://${host}`, port: null };
  }

  async stop(serviceId: string, options: { remove?: boolean } = {}): Promise<void> {
    const n = ecsNames(serviceId);
    const resourceId = `service/${this.o.cluster}/${n.service}`;
    if (!options.remove) {
      // Paused: no tasks, and the scaling target may not bring any back.
      await this.o.autoscaling.send(
        new RegisterScalableTargetCommand({
          ServiceNamespace: 'ecs',
          ResourceId: resourceId,
          ScalableDimension: 'ecs:service:DesiredCount',
          MinCapacity: 0,
          MaxCapacity: 0,
        }),
      );
      await this.o.ecs.send(
        new UpdateServiceCommand({ cluster: this.o.cluster, service: n.service, desiredCount: 0 }),
      );
      return;
    }
    try {
      await this.o.autoscaling.send(
        new DeregisterScalableTargetCommand({
          ServiceNamespace: 'ecs',
          ResourceId: resourceId,
          ScalableDimension: 'ecs:service:DesiredCount',
        }),
      );
    } catch {
      // No scaling target (never started, or removed before): nothing to deregister.
    }
    try {
      await this.o.ecs.send(
        new DeleteServiceCommand({ cluster: this.o.cluster, service: n.service, force: true }),
      );
    } catch (err) {
      if ((err as Error).name !== 'ServiceNotFoundException') throw err;
    }
    const rule = await this.findRule(serviceId);
    if (rule) await this.o.elb.send(new DeleteRuleCommand({ RuleArn: rule }));
    let groups: { TargetGroupArn?: string | undefined }[] = [];
    try {
      groups =
        (await this.o.elb.send(new DescribeTargetGroupsCommand({ Names: [n.targetGroup] })))?.TargetGroups ??
        [];
    } catch (err) {
      if (!(err instanceof TargetGroupNotFoundException)) throw err;
    }
    for (const g of groups) {
      try {
        await this.o.elb.send(new DeleteTargetGroupCommand({ TargetGroupArn: g.TargetGroupArn }));
      } catch {
        // Still in use until ECS has drained the service; docs/services.md says how to remove a leftover.
      }
    }
  }

  async close(): Promise<void> {}

  /**
   * The app container's lines from CloudWatch Logs (streams `app/<service id>/...`), the newest
   * `limit` within [since, until], in time order. CloudWatch keeps no stream of origin per line,
   * so the level is inferred: the runner's own `[platform]` lines are warn, lines that read as
   * errors (error, exception, fatal, traceback) are error, the rest info. Secret values were
   * redacted in the task before the lines left it.
   */
  async logs(
    serviceId: string,
    query: { since?: string; until?: string; level?: 'info' | 'warn' | 'error'; limit: number },
  ) {
    const out: { at: string; level: 'info' | 'warn' | 'error'; message: string }[] = [];
    let nextToken: string | undefined;
    let pages = 0;
    do {
      const page = await this.o.logs.send(
        new FilterLogEventsCommand({
          logGroupName: this.o.logGroup,
          logStreamNamePrefix: `app/${serviceId}`,
          ...(query.since ? { startTime: Date.parse(query.since) } : {}),
          ...(query.until ? { endTime: Date.parse(query.until) } : {}),
          nextToken,
        }),
      );
      for (const e of page.events ?? []) {
        const message = (e.message ?? '').replace(/\n$/, '');
        const level = message.startsWith('[platform]')
          ? 'warn'
          : /\b(error|exception|fatal|traceback)\b/i.test(message)
            ? 'error'
            : 'info';
        if (query.level && level !== query.level) continue;
        out.push({ at: new Date(e.timestamp ?? 0).toISOString(), level, message });
      }
      nextToken = page.nextToken;
      pages++;
    } while (nextToken && pages < 20);
    return out.slice(-query.limit);
  }

  private async ensureTargetGroup(name: string): Promise<string> {
    // CreateTargetGroup is idempotent for the same name and settings: it answers the existing one.
    const created = await this.o.elb.send(
      new CreateTargetGroupCommand({
        Name: name,
        Protocol: 'HTTP',
        Port: GATEWAY_PORT,
        VpcId: this.o.vpcId,
        TargetType: 'ip',
        HealthCheckProtocol: 'HTTP',
        HealthCheckPath: '/health',
        HealthCheckIntervalSeconds: 10,
        HealthyThresholdCount: 2,
        UnhealthyThresholdCount: 3,
        Matcher: { HttpCode: '200' },
      }),
    );
    const arn = created.TargetGroups?.[0]?.TargetGroupArn;
    if (!arn) throw new Error('CreateTargetGroup returned no ARN');
    return arn;
  }

  /** The listener rule whose tag names this service, found through its host condition's value. */
  private async findRule(serviceId: string): Promise<string | undefined> {
    let marker: string | undefined;
    do {
      const page = await this.o.elb.send(
        new DescribeRulesCommand({ ListenerArn: this.o.listenerArn, Marker: marker }),
      );
      for (const rule of page.Rules ?? []) {
        const forward = rule.Actions?.find((a) => a.Type === 'forward');
        if (forward?.TargetGroupArn?.includes(`/${ecsNames(serviceId).targetGroup}/`)) return rule.RuleArn;
      }
      marker = page.NextMarker;
    } while (marker);
    return undefined;
  }

  private async ensureRule(host: string, targetGroupArn: string, serviceId: string): Promise<void> {
    if (await this.findRule(serviceId)) return;
    let priority = rulePriority(serviceId);
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        await this.o.elb.send(
          new CreateRuleCommand({
            ListenerArn: this.o.listenerArn,
            Priority: priority,
            Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: [host] } }],
            Actions: [{ Type: 'forward', TargetGroupArn: targetGroupArn }],
            Tags: [{ Key: 'agenthost:service', Value: serviceId }],
          }),
        );
        return;
      } catch (err) {
        if (!(err instanceof PriorityInUseException)) throw err;
        priority = (priority % 49_999) + 1;
      }
    }
    throw new Error('No free listener rule priority found');
  }
}

/** A stable starting priority for a service's rule (1-49,999), probed upwards when taken. */
export function rulePriority(serviceId: string): number {
  let h = 0;
  for (const c of serviceId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return (h % 49_999) + 1;
}

/**
 * The gateway container (`node -e GATEWAY_SOURCE`): listens on 8080, answers GET /health itself
 * (503 until the app accepts connections on PLATFORM_HTTP_PORT; an app without HTTP is ready after
 * a second), and proxies every other request to the app. If 8080 is taken it exits with
 * PORT_CONFLICT_EXIT. CommonJS, Node built-ins only.
 */
export const GATEWAY_SOURCE = String.raw`'use strict';
// The task's own environment (written this way: only the config module reads the platform's).
const ENV = process['env'];
const http = require('node:http');
const net = require('node:net');
const APP_PORT = Number(ENV.PLATFORM_HTTP_PORT || ${APP_PORT});
const PORT = Number(ENV.AGENTHOST_GATEWAY_PORT || ${GATEWAY_PORT});
const HTTP = ENV.AGENTHOST_HTTP !== 'false';
const started = Date.now();
let ready = false;
function probe() {
  if (ready) return;
  if (!HTTP) { if (Date.now() - started >= 1000) ready = true; else setTimeout(probe, 200); return; }
  const s = net.connect({ host: '127.0.0.1', port: APP_PORT });
  s.once('connect', () => { s.destroy(); ready = true; console.log(JSON.stringify({ msg: 'app ready', port: APP_PORT })); });
  s.once('error', () => { s.destroy(); setTimeout(probe, 200); });
}
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.split('?')[0] === '/health') {
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: ready ? 'ok' : 'starting' }));
    return;
  }
  if (!ready || !HTTP) { res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' }); res.end('{"error":{"code":"SERVICE_UNAVAILABLE","message":"The service is not ready"}}'); return; }
  const up = http.request({ host: '127.0.0.1', port: APP_PORT, method: req.method, path: req.url, headers: req.headers }, (r) => { res.writeHead(r.statusCode || 502, r.headers); r.pipe(res); });
  up.on('error', () => { if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }); res.end('{"error":{"code":"BAD_GATEWAY","message":"The service did not answer"}}'); });
  req.pipe(up);
});
server.on('error', (err) => {
  console.error(JSON.stringify({ msg: err.code === 'EADDRINUSE' ? 'port ${GATEWAY_PORT} is taken: the app must listen on $PORT, not ${GATEWAY_PORT}' : 'gateway failed', error: String(err) }));
  process.exit(err.code === 'EADDRINUSE' ? ${PORT_CONFLICT_EXIT} : 1);
});
server.listen(PORT, '0.0.0.0', probe);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * The app container (`node -e SERVICE_APP_SOURCE`): downloads the bundle through the signed URL,
 * unpacks it, installs declared dependencies, picks the entrypoint (AGENTHOST_COMMAND, else the
 * same auto-scan as locally), and runs it with its output line by line through a filter that
 * replaces every secret value (the variables named in AGENTHOST_SECRET_NAMES) with [REDACTED].
 * Exits with the app's status; an app that fails on port 8080 exits with PORT_CONFLICT_EXIT.
 */
export const SERVICE_APP_SOURCE = String.raw`'use strict';
const ENV = process['env'];
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const cp = require('node:child_process');
${ARCHIVE_SOURCE}
const ROOT = ENV.AGENTHOST_APP_DIR || '/tmp/app';
const SCAN = ${JSON.stringify(ENTRYPOINT_SCAN)};
const note = (m) => process.stderr.write('[platform] ' + m + '\n');
const secrets = (ENV.AGENTHOST_SECRET_NAMES || '').split(',').filter(Boolean).map((n) => ENV[n]).filter((v) => v && v.length >= 4).sort((a, b) => b.length - a.length);
const redact = (s) => { for (const v of secrets) s = s.split(v).join('[REDACTED]'); return s; };
let conflict = false;
function pipe(from, to) {
  let partial = '';
  from.on('data', (c) => {
    const parts = (partial + c.toString('utf8')).split('\n');
    partial = parts.pop();
    for (const line of parts) { if (/EADDRINUSE/.test(line) && /${GATEWAY_PORT}/.test(line)) conflict = true; to.write(redact(line) + '\n'); }
  });
  from.on('end', () => { if (partial) to.write(redact(partial) + '\n'); });
}
(async () => {
  const url = ENV.AGENTHOST_BUNDLE_URL;
  const format = ENV.AGENTHOST_BUNDLE_FORMAT;
  delete ENV.AGENTHOST_BUNDLE_URL;
  fs.mkdirSync(ROOT, { recursive: true });
  const res = await fetch(url);
  if (!res.ok) { note('bundle download failed: HTTP ' + res.status); process.exit(70); }
  (format === 'zip' ? unzip : untar)(Buffer.from(await res.arrayBuffer()), ROOT);
  const files = fs.readdirSync(ROOT);
  const read = (f) => (files.includes(f) ? fs.readFileSync(path.join(ROOT, f), 'utf8') : undefined);
  const pkgText = read('package.json');
  let pkg = {};
  try { pkg = pkgText ? JSON.parse(pkgText) : {}; } catch {}
  let command = ENV.AGENTHOST_COMMAND || '';
  if (!command && pkg.scripts && typeof pkg.scripts.start === 'string' && pkg.scripts.start.trim()) command = 'npm start';
  if (!command) { const hit = SCAN.find((e) => files.includes(e.file)); if (hit) command = hit.command; }
  if (!command) { note('no entrypoint: none of ' + SCAN.map((e) => e.file).join(', ') + ' in the bundle'); process.exit(78); }
  const steps = [];
  if (pkg.dependencies && Object.keys(pkg.dependencies).length > 0) steps.push('npm install --omit=dev --no-audit --no-fund --loglevel=error');
  const reqs = read('requirements.txt');
  if (reqs && reqs.split('\n').some((l) => l.trim() && !l.trim().startsWith('#'))) steps.push('python3 -m pip install --disable-pip-version-check -q -r requirements.txt --target .python-packages');
  const env = Object.assign({}, ENV, { PYTHONPATH: '.python-packages' });
  delete env.AGENTHOST_SECRET_NAMES; delete env.AGENTHOST_COMMAND; delete env.AGENTHOST_BUNDLE_FORMAT; delete env.AGENTHOST_APP_DIR;
  if (steps.length) {
    note('installing dependencies');
    const r = cp.spawnSync('/bin/sh', ['-c', steps.join(' && ')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    process.stdout.write(redact(String(r.stdout || ''))); process.stderr.write(redact(String(r.stderr || '')));
    if (r.status !== 0) { note('dependency install failed'); process.exit(71); }
  }
  note('starting: ' + command);
  const child = cp.spawn('/bin/sh', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(conflict ? ${PORT_CONFLICT_EXIT} : code === null ? 1 : code));
})().catch((err) => { note('start failed: ' + String(err && err.message)); process.exit(70); });
`;
