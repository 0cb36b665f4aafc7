import { createHash } from 'node:crypto';
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
import {
  APP_PORT,
  BUNDLE_FORMAT_ENV,
  BUNDLE_URL_ENV,
  COMMAND_ENV,
  GATEWAY_PORT,
  HTTP_ENV,
  LAUNCHER_URL_ENV,
  SECRET_NAMES_ENV,
  SERVICE_APP_BOOTSTRAP,
} from '../../containers/service-protocol.ts';
import {
  SERVICE_BUNDLE_URL_SECONDS,
  type ServiceLaunch,
  type ServiceRunner,
  type SupervisionHooks,
} from '../../ports/service-runner.ts';
import { presignS3Get, presignS3Put } from './s3-presign.ts';

export { APP_PORT, GATEWAY_PORT, PORT_CONFLICT_EXIT } from '../../containers/service-protocol.ts';

/**
 * Where the platform puts the bundled service launcher in the bundle bucket, named by its content
 * (service-app-launcher-<sha256 prefix>.cjs): every start uploads it, and a task of an older
 * revision keeps reading the launcher it was started with.
 */
export const SERVICE_PROGRAMS_PREFIX = 'service-programs/';

/** The key of a launcher's object. */
export const launcherKey = (source: string) =>
  `${SERVICE_PROGRAMS_PREFIX}service-app-launcher-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.cjs`;

/** A presigned URL of an object in the bundle bucket (the launcher's upload and download). */
export type ServicePresign = (method: 'GET' | 'PUT', key: string, ttlSeconds: number) => Promise<string>;

export interface EcsServiceRunnerOptions {
  /** AWS_ENDPOINT_URL_S3, when S3 is elsewhere than AWS (the emulated deployment's). */
  s3Endpoint?: string | undefined;
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
  /**
   * How clients reach the listener, when not https on 443 (the emulated deployment's loopback
   * front is plain HTTP on a port of its own). @default 'https'
   */
  urlScheme?: 'https' | 'http';
  urlPort?: number;
  logGroup: string;
  region: string;
  image: string;
  /** Secrets Manager name prefix (PLATFORM_SECRETS_PREFIX) and the account, for valueFrom ARNs. */
  secretsPrefix: string;
  account: string;
  partition?: string;
  /**
   * The gateway, bundled (lib/container-programs.ts; PLATFORM_SERVICES_GATEWAY_FILE): small enough
   * to be the gateway container's command, `node -e <gateway>`.
   */
  gatewaySource: string;
  /**
   * The launcher, bundled (PLATFORM_SERVICES_LAUNCHER_FILE): uploaded to the bundle bucket on every
   * start; the app container's SERVICE_APP_BOOTSTRAP downloads it through a presigned URL.
   */
  launcherSource: string;
  /** The bundle bucket (PLATFORM_BUNDLE_BUCKET), which holds the launcher under SERVICE_PROGRAMS_PREFIX. */
  bucket: string;
  /** @default presignS3Get / presignS3Put on the bucket, with this role's credentials */
  presign?: ServicePresign;
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
 * (the gateway container, functions/containers/service-gateway.ts, on 8080 answering /health and
 * proxying to the app on 3000; the app container's bootstrap downloading the launcher,
 * functions/containers/service-app-launcher.ts, which downloads the bundle, installs, finds its
 * entrypoint and redacts secret values from its output, both through fresh signed URLs), secrets by reference to Secrets Manager (never
 * values in the task definition), no task role, one ECS service (desired count = min_instances)
 * with an Application Auto Scaling target up to max_instances, and a target group plus a
 * host-header rule on the shared HTTPS listener. Crashes arrive as ECS task state change events
 * (functions/jobs/service-events.ts); ECS starts replacement tasks itself, and a pause sets the
 * desired count to 0.
 */
export class EcsServiceRunner implements ServiceRunner {
  readonly kind = 'ecs' as const;
  readonly fetchesBundle = true;
  private readonly o: EcsServiceRunnerOptions;
  private readonly presign: ServicePresign;

  constructor(options: EcsServiceRunnerOptions) {
    this.o = options;
    const { bucket, region, s3Endpoint: endpoint } = options;
    this.presign =
      options.presign ??
      ((method, key, expiresIn) =>
        (method === 'GET' ? presignS3Get : presignS3Put)({ bucket, key, region, expiresIn, endpoint }));
  }

  /**
   * Uploads the launcher (idempotent: its key is its content's hash) and answers a presigned GET
   * URL of it that lives as long as the bundle's (SERVICE_BUNDLE_URL_SECONDS; docs/services.md on
   * what that means for tasks started later).
   */
  private async launcherUrl(): Promise<string> {
    const key = launcherKey(this.o.launcherSource);
    const res = await fetch(await this.presign('PUT', key, 300), {
      method: 'PUT',
      body: this.o.launcherSource,
      headers: { 'content-type': 'application/javascript' },
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`The service launcher could not be uploaded: HTTP ${res.status}`);
    return this.presign('GET', key, SERVICE_BUNDLE_URL_SECONDS);
  }

  bind(_hooks: SupervisionHooks): void {
    // Supervision runs in the ECS events function, not in this process.
  }

  /** The task definition of one start; `launcherUrl` is the launcher's presigned GET URL. */
  taskDefinition(launch: ServiceLaunch, launcherUrl: string): RegisterTaskDefinitionCommandInput {
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
          command: ['node', '-e', this.o.gatewaySource],
          portMappings: [{ containerPort: GATEWAY_PORT, protocol: 'tcp' }],
          environment: [
            { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
            { name: HTTP_ENV, value: String(launch.http) },
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
          command: ['node', '-e', SERVICE_APP_BOOTSTRAP],
          dependsOn: [{ containerName: 'gateway', condition: 'START' }],
          environment: [
            ...plain,
            { name: 'PORT', value: String(APP_PORT) },
            { name: 'PLATFORM_HTTP_PORT', value: String(APP_PORT) },
            { name: LAUNCHER_URL_ENV, value: launcherUrl },
            { name: BUNDLE_URL_ENV, value: launch.bundleUrl ?? '' },
            { name: BUNDLE_FORMAT_ENV, value: launch.bundle?.format ?? 'tar.gz' },
            { name: COMMAND_ENV, value: launch.command ?? '' },
            { name: SECRET_NAMES_ENV, value: secretNames.join(',') },
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
    const registered = await this.o.ecs.send(
      new RegisterTaskDefinitionCommand(this.taskDefinition(launch, await this.launcherUrl())),
    );
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
    const port = this.o.urlPort === undefined ? '' : `:${this.o.urlPort}`;
    return { url: `${this.o.urlScheme ?? 'https'}://${host}${port}`, port: null };
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
