import {
  DeregisterScalableTargetCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-ecs';
import { GATEWAY_PORT } from '../../containers/service-protocol.ts';
import {
  SERVICE_BUNDLE_URL_SECONDS,
  type ServiceLaunch,
  type ServiceRunner,
  type SupervisionHooks,
} from '../../ports/service-runner.ts';
import { ensureRule, ensureTargetGroup, removeServiceRouting } from './ecs-service-load-balancing.ts';
import { readServiceLogs } from './ecs-service-logs.ts';
import { ecsNames, launcherKey, serviceHost } from './ecs-service-names.ts';
import type { EcsServiceRunnerOptions, ServicePresign } from './ecs-service-options.ts';
import { serviceTaskDefinition } from './ecs-service-task-definition.ts';
import { presignS3Get, presignS3Put } from './s3-presign.ts';

/**
 * The service runner on ECS Fargate (docs/services.md): one task definition revision per start
 * (ecs-service-task-definition.ts: the gateway container, functions/containers/service-gateway.ts,
 * on 8080 answering /health and proxying to the app on 3000; the app container's bootstrap
 * downloading the launcher, functions/containers/service-app-launcher.ts, which downloads the
 * bundle, installs, finds its entrypoint and redacts secret values from its output, both through
 * fresh signed URLs), secrets by reference to Secrets Manager (never values in the task
 * definition), no task role, one ECS service (desired count = min_instances) with an Application
 * Auto Scaling target up to max_instances, and a target group plus a host-header rule on the
 * shared HTTPS listener (ecs-service-load-balancing.ts). Crashes arrive as ECS task state change
 * events (functions/jobs/service-events.ts); ECS starts replacement tasks itself, and a pause sets
 * the desired count to 0.
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

  async start(launch: ServiceLaunch): Promise<{ url: string; port: number | null }> {
    const n = ecsNames(launch.serviceId);
    const host = serviceHost(launch.name, launch.workspaceId, this.o.domain);
    const registered = await this.o.ecs.send(
      new RegisterTaskDefinitionCommand(serviceTaskDefinition(this.o, launch, await this.launcherUrl())),
    );
    const taskDefinitionArn = registered.taskDefinition?.taskDefinitionArn;
    if (!taskDefinitionArn) throw new Error('RegisterTaskDefinition returned no ARN');
    const targetGroupArn = await ensureTargetGroup(this.o, n.targetGroup);
    await ensureRule(this.o, host, targetGroupArn, launch.serviceId);
    if (await this.isActive(n.service)) {
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
      // Nothing to pause: never started, or deleted (a late crash's decision to pause, after a
      // delete, must not fail; UpdateService would answer ServiceNotFound or ServiceNotActive).
      if (!(await this.isActive(n.service))) return;
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
    await removeServiceRouting(this.o, serviceId);
  }

  async close(): Promise<void> {}

  /** Whether the ECS service exists and is ACTIVE (not draining after a delete, nor gone). */
  private async isActive(service: string): Promise<boolean> {
    const existing = await this.o.ecs.send(
      new DescribeServicesCommand({ cluster: this.o.cluster, services: [service] }),
    );
    return existing.services?.some((s) => s.status === 'ACTIVE') === true;
  }

  /** The app container's lines, from CloudWatch Logs (ecs-service-logs.ts). */
  async logs(
    serviceId: string,
    query: { since?: string; until?: string; level?: 'info' | 'warn' | 'error'; limit: number },
  ) {
    return readServiceLogs(this.o, serviceId, query);
  }
}
