import { randomUUID } from 'node:crypto';
import type {
  Deployment,
  EcsServiceEmulatorOptions,
  EmulatedService,
  ServiceTask,
  TaskDefinition,
} from './ecs-service-model.ts';
import {
  describeServiceTask,
  runServiceTask,
  type ServiceTaskHost,
  STOP_FILE,
  STOP_TIMEOUT_MS,
  taskStateChangeDetail,
} from './ecs-service-task.ts';
import { TaskDefinitions } from './ecs-task-definitions.ts';
import { EcsTaskLedger, VCPU_LIMIT_REASON } from './ecs-task-ledger.ts';
import { AwsWireError } from './emulator-http.ts';
import { capacityProvider } from './fargate-capacity-provider.ts';

/**
 * ECS services for the emulated deployment, added to EcsEmulator (`addOperations`): the
 * operations the ECS service runner sends (RegisterTaskDefinition, CreateService, UpdateService,
 * DescribeServices, DeleteService) and a service scheduler behind them. A service keeps its
 * desired count of tasks of its newest deployment; a task that stops on its own is replaced after
 * a throttle (doubling from 1 s, at most 30 s, reset by a healthy task); a new deployment
 * (another task definition, or forceNewDeployment) starts its tasks first and stops the old ones
 * once the new are healthy (minimumHealthyPercent 100); an UNHEALTHY task is replaced.
 *
 * A task runs all its containers in one bubblewrap sandbox with network egress (one network
 * namespace, as the containers of an awsvpc task share one ENI and localhost), under a small init
 * (ecs-task-init.ts) that starts them in dependsOn order, runs their health checks and stops the
 * rest when an essential one exits. Of the host's loopback only the S3 emulator is reachable
 * (presigned URLs point there). The first port mapping is published on a free host loopback port,
 * which is what the task registers in its load balancer target groups (the task's ENI address
 * and port in AWS). Secrets are resolved with GetSecretValue at task start, as the execution role
 * does; awslogs lines go to the CloudWatch Logs emulator; every change of a task's status or health
 * becomes an "ECS Task State Change" event on the EventBridge emulator.
 *
 * Its tasks count against the account's Fargate vCPU quota with RunTask's (the shared ledger,
 * ecs-task-ledger.ts): a task that does not fit is not placed, the service's events say why, as
 * ECS's do, and the scheduler tries again every few seconds until it fits.
 *
 * This file holds the operations and the scheduler; a task's supervision is ecs-service-task.ts,
 * the state's shapes ecs-service-model.ts.
 */

/** How often a service retries a task it could not place (ECS retries on its own schedule). */
const PLACEMENT_RETRY_MS = 2000;
/** DescribeServices shows a service's newest events (ECS: 100). */
const MAX_EVENTS = 100;

type Body = Record<string, unknown>;

const invalid = (message: string) => new AwsWireError('InvalidParameterException', 400, message);
const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);

export class EcsServiceEmulator {
  private readonly o: EcsServiceEmulatorOptions;
  private readonly definitions: TaskDefinitions;
  private readonly services = new Map<string, EmulatedService>();
  private readonly tasks = new Map<string, ServiceTask>();
  private readonly running = new Set<Promise<void>>();
  private readonly ledger: EcsTaskLedger;
  private closed = false;

  /** The steps of the scheduler a task's supervision (ecs-service-task.ts) takes. */
  private readonly host: ServiceTaskHost;

  constructor(options: EcsServiceEmulatorOptions) {
    this.o = options;
    this.definitions = new TaskDefinitions(options);
    this.ledger =
      options.ledger ?? new EcsTaskLedger({ region: options.region, accountId: options.accountId });
    this.host = {
      options,
      register: (t) => this.register(t),
      deregister: (t) => this.deregister(t),
      stop: (t, stopCode, reason) => this.stop(t, stopCode, reason),
      emit: (t) => this.emit(t),
      reconcile: (s) => this.reconcile(s),
    };
  }

  /** The operations for EcsEmulator.addOperations. */
  operations(): Record<string, (body: Body) => unknown> {
    return {
      RegisterTaskDefinition: (b) => this.definitions.register(b),
      CreateService: (b) => this.createService(b),
      UpdateService: (b) => this.updateService(b),
      DescribeServices: (b) => this.describeServices(b),
      DeleteService: (b) => this.deleteService(b),
    };
  }

  /** Application Auto Scaling moving a service's desired count into its bounds. */
  applyBounds(target: { namespace: string; resourceId: string; min: number; max: number }): void {
    if (target.namespace !== 'ecs') return;
    const [, cluster, name] = target.resourceId.split('/');
    const s = this.find(cluster, name ?? '');
    if (s?.status !== 'ACTIVE') return;
    const desired = Math.min(target.max, Math.max(target.min, s.desiredCount));
    if (desired === s.desiredCount) return;
    s.desiredCount = desired;
    this.reconcile(s);
  }

  /** Stops every task and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.services.values()) clearTimeout(s.timer);
    for (const t of this.tasks.values()) t.abort.abort();
    await Promise.allSettled([...this.running]);
  }

  // ---------------------------------------------------------------------------------------------
  // Operations

  private clusterArn(cluster: unknown): string {
    return this.ledger.clusterArn(cluster);
  }

  private find(cluster: unknown, service: string): EmulatedService | undefined {
    const name = service.startsWith('arn:') ? (service.split('/').pop() ?? '') : service;
    return this.services.get(`${this.clusterArn(cluster)}|${name}`);
  }

  private definition(ref: unknown): TaskDefinition {
    return this.definitions.get(ref);
  }

  private createService(b: Body): unknown {
    const name = String(b.serviceName ?? '');
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(name)) throw invalid('serviceName is invalid');
    const clusterArn = this.clusterArn(b.cluster);
    const key = `${clusterArn}|${name}`;
    const existing = this.services.get(key);
    if (existing && existing.status === 'ACTIVE') throw invalid('Creation of service was not idempotent.');
    if (existing && existing.status === 'DRAINING')
      throw invalid('Unable to Start a service that is still Draining.');
    const def = this.definition(b.taskDefinition);
    const desired = Number(b.desiredCount ?? 0);
    const provider = capacityProvider(b);
    this.ledger.useCluster(clusterArn);
    const s: EmulatedService = {
      arn: `arn:aws:ecs:${this.o.region}:${this.o.accountId}:service/${clusterArn.split('/').pop()}/${name}`,
      name,
      clusterArn,
      status: 'ACTIVE',
      desiredCount: desired,
      deployments: [
        {
          id: `ecs-svc/${randomUUID().replaceAll('-', '').slice(0, 19)}`,
          taskDefinition: def,
          createdAt: Date.now(),
        },
      ],
      loadBalancers: ((b.loadBalancers as EmulatedService['loadBalancers'] | undefined) ?? []).map((l) => ({
        targetGroupArn: l.targetGroupArn,
        containerName: l.containerName,
        containerPort: Number(l.containerPort),
      })),
      capacityProviderName: provider,
      events: [],
      createdAt: Date.now(),
      raw: b,
      failures: 0,
      nextLaunchAt: 0,
    };
    this.services.set(key, s);
    this.reconcile(s);
    return { service: this.describeService(s) };
  }

  private updateService(b: Body): unknown {
    const s = this.find(b.cluster, String(b.service ?? ''));
    if (!s) throw new AwsWireError('ServiceNotFoundException', 400, 'Service not found.');
    if (s.status !== 'ACTIVE')
      throw new AwsWireError('ServiceNotActiveException', 400, 'Service was not ACTIVE.');
    if (b.desiredCount !== undefined) s.desiredCount = Number(b.desiredCount);
    const current = s.deployments[0] as Deployment;
    const def = b.taskDefinition !== undefined ? this.definition(b.taskDefinition) : current.taskDefinition;
    if (def !== current.taskDefinition || b.forceNewDeployment === true) {
      s.deployments.unshift({
        id: `ecs-svc/${randomUUID().replaceAll('-', '').slice(0, 19)}`,
        taskDefinition: def,
        createdAt: Date.now(),
      });
      // A new deployment starts without the old one's throttle.
      s.failures = 0;
      s.nextLaunchAt = 0;
    }
    this.reconcile(s);
    return { service: this.describeService(s) };
  }

  private describeServices(b: Body): unknown {
    const services: unknown[] = [];
    const failures: unknown[] = [];
    for (const ref of (b.services as string[] | undefined) ?? []) {
      const s = this.find(b.cluster, ref);
      if (s) services.push(this.describeService(s));
      else failures.push({ arn: ref, reason: 'MISSING' });
    }
    return { services, failures };
  }

  private deleteService(b: Body): unknown {
    const s = this.find(b.cluster, String(b.service ?? ''));
    if (!s || s.status === 'INACTIVE')
      throw new AwsWireError('ServiceNotFoundException', 400, 'Service not found.');
    if (s.desiredCount > 0 && b.force !== true) {
      throw invalid('The service cannot be stopped while it is scaled above 0.');
    }
    s.status = 'DRAINING';
    s.desiredCount = 0;
    this.reconcile(s);
    return { service: this.describeService(s) };
  }

  private describeService(s: EmulatedService): Record<string, unknown> {
    const live = [...this.tasks.values()].filter((t) => t.service === s && t.lastStatus !== 'STOPPED');
    const primary = s.deployments[0] as Deployment;
    return {
      serviceArn: s.arn,
      serviceName: s.name,
      clusterArn: s.clusterArn,
      status: s.status,
      desiredCount: s.desiredCount,
      runningCount: live.filter((t) => t.lastStatus === 'RUNNING').length,
      pendingCount: live.filter((t) => t.lastStatus !== 'RUNNING').length,
      ...(s.raw.capacityProviderStrategy
        ? { capacityProviderStrategy: s.raw.capacityProviderStrategy }
        : { launchType: 'FARGATE' }),
      taskDefinition: primary.taskDefinition.arn,
      loadBalancers: s.loadBalancers,
      networkConfiguration: s.raw.networkConfiguration,
      deploymentConfiguration: s.raw.deploymentConfiguration,
      healthCheckGracePeriodSeconds: s.raw.healthCheckGracePeriodSeconds,
      createdAt: seconds(s.createdAt),
      deployments: s.deployments.map((d, i) => {
        const mine = live.filter((t) => t.deploymentId === d.id);
        return {
          id: d.id,
          status: i === 0 ? 'PRIMARY' : 'ACTIVE',
          taskDefinition: d.taskDefinition.arn,
          desiredCount: i === 0 ? s.desiredCount : 0,
          runningCount: mine.filter((t) => t.lastStatus === 'RUNNING').length,
          pendingCount: mine.filter((t) => t.lastStatus !== 'RUNNING').length,
          createdAt: seconds(d.createdAt),
          rolloutState: i === 0 ? 'IN_PROGRESS' : undefined,
        };
      }),
      events: s.events.map((e) => ({ id: e.id, createdAt: seconds(e.createdAt), message: e.message })),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // The service scheduler

  private reconcile(s: EmulatedService): void {
    if (this.closed) return;
    clearTimeout(s.timer);
    s.timer = undefined;
    const desired = s.status === 'ACTIVE' ? s.desiredCount : 0;
    const primary = s.deployments[0] as Deployment;
    const live = [...this.tasks.values()].filter((t) => t.service === s && t.desiredStatus === 'RUNNING');
    const current = live.filter((t) => t.deploymentId === primary.id);
    const old = live.filter((t) => t.deploymentId !== primary.id);
    if (current.length < desired) {
      const wait = s.nextLaunchAt - Date.now();
      if (wait > 0) {
        s.timer = setTimeout(() => this.reconcile(s), wait);
        s.timer.unref();
      } else {
        for (let i = current.length; i < desired; i++) if (!this.launch(s, primary)) break;
      }
    }
    if (current.length > desired) {
      for (const t of current.slice(desired)) {
        this.stop(t, 'ServiceSchedulerInitiated', `Scaling activity initiated by (deployment ${primary.id})`);
      }
    }
    const ready = current.filter(
      (t) => t.lastStatus === 'RUNNING' && (t.healthStatus === 'HEALTHY' || !this.hasHealthCheck(t)),
    );
    if (ready.length >= desired) {
      for (const t of old) {
        this.stop(t, 'ServiceSchedulerInitiated', `Scaling activity initiated by (deployment ${primary.id})`);
      }
    }
    const remaining = [...this.tasks.values()].filter((t) => t.service === s && t.lastStatus !== 'STOPPED');
    if (remaining.every((t) => t.deploymentId === primary.id)) s.deployments.splice(1);
    if (s.status === 'DRAINING' && remaining.length === 0) s.status = 'INACTIVE';
  }

  private hasHealthCheck(t: ServiceTask): boolean {
    return t.definition.containerDefinitions.some((c) => c.healthCheck);
  }

  /** Starts one task of the deployment, or says why it cannot (the quota) and tries again later. */
  private launch(s: EmulatedService, deployment: Deployment): boolean {
    const def = deployment.taskDefinition;
    if (!this.ledger.fits(s.capacityProviderName, def.cpu)) {
      const message = `(service ${s.name}) was unable to place a task. Reason: ${VCPU_LIMIT_REASON}.`;
      // One event while it stays unplaceable, as ECS does not repeat an unchanged message at once.
      if (s.events[0]?.message !== message) {
        s.events.unshift({ id: randomUUID(), createdAt: Date.now(), message });
        s.events.splice(MAX_EVENTS);
        this.o.log?.(`[ecs] ${message}`);
      }
      if (!s.timer) {
        s.timer = setTimeout(() => this.reconcile(s), PLACEMENT_RETRY_MS);
        s.timer.unref();
      }
      return false;
    }
    const id = randomUUID().replaceAll('-', '');
    const task: ServiceTask = {
      id,
      arn: `arn:aws:ecs:${this.o.region}:${this.o.accountId}:task/${s.clusterArn.split('/').pop()}/${id}`,
      service: s,
      deploymentId: deployment.id,
      definition: def,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      healthStatus: 'UNKNOWN',
      containers: def.containerDefinitions.map((c) => ({
        name: c.name,
        lastStatus: 'PENDING',
        healthStatus: 'UNKNOWN',
      })),
      createdAt: Date.now(),
      abort: new AbortController(),
      version: 1,
      registered: false,
    };
    this.tasks.set(task.arn, task);
    this.ledger.add({
      arn: task.arn,
      clusterArn: s.clusterArn,
      family: def.family,
      startedBy: deployment.id,
      serviceName: s.name,
      cpu: def.cpu,
      capacityProviderName: s.capacityProviderName,
      createdAt: task.createdAt,
      state: () => task,
      describe: () => describeServiceTask(task, this.o.region, this.o.accountId),
      forget: () => this.tasks.delete(task.arn),
    });
    this.emit(task);
    const run = runServiceTask(this.host, task)
      .catch((err: unknown) => this.o.log?.(`[ecs] task ${id.slice(0, 8)} failed: ${String(err)}`))
      .finally(() => this.running.delete(run));
    this.running.add(run);
    return true;
  }

  private stop(t: ServiceTask, stopCode: string, reason: string): void {
    if (t.desiredStatus === 'STOPPED') return;
    t.desiredStatus = 'STOPPED';
    t.stopCode = stopCode;
    t.stoppedReason = reason;
    t.stoppingAt = Date.now();
    this.deregister(t);
    // SIGTERM through the init; the sandbox goes after the stop timeout whatever is left.
    const kill = setTimeout(() => t.abort.abort(), STOP_TIMEOUT_MS + 5000);
    kill.unref();
    if (t.session) t.session.writeFile(STOP_FILE, '').catch(() => t.abort.abort());
    else t.abort.abort();
  }

  private register(t: ServiceTask): void {
    if (t.registered || t.hostPort === undefined) return;
    for (const lb of t.service.loadBalancers) {
      const c = t.definition.containerDefinitions.find((x) => x.name === lb.containerName);
      if (c?.portMappings?.[0]?.containerPort === lb.containerPort) {
        this.o.registerTarget(lb.targetGroupArn, t.arn, t.hostPort);
      }
    }
    t.registered = true;
  }

  private deregister(t: ServiceTask): void {
    if (!t.registered) return;
    for (const lb of t.service.loadBalancers) this.o.deregisterTarget(lb.targetGroupArn, t.arn);
    t.registered = false;
  }

  private emit(task: ServiceTask): void {
    this.o
      .taskStateChange(taskStateChangeDetail(task, this.o.region, this.o.accountId), [task.arn])
      .catch((err: unknown) => this.o.log?.(`[ecs] task state change not delivered: ${String(err)}`));
  }
}
