import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SANDBOX_NODE_DIR } from '../adapters/local/bwrap/filesystem-view.ts';
import type { Sandbox, SandboxSession } from '../ports/sandbox.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../ports/sandbox.ts';
import type { InitContainer, InitSpec } from './ecs-task-init.ts';
import { AwsWireError } from './emulator-http.ts';

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
 */

const INIT_SOURCE = readFileSync(new URL('./ecs-task-init.ts', import.meta.url), 'utf8');
const INIT_FILE = '.ecs-task-init.ts';
const STOP_FILE = '.ecs-stop';
/** ECS's default: SIGTERM, then SIGKILL 30 s later. */
const STOP_TIMEOUT_MS = 30_000;
/** Container definitions of a task definition must fit in 64 KiB. */
const MAX_CONTAINER_DEFINITIONS_BYTES = 64 * 1024;
/** How long a service task may run here (a sandbox needs a deadline). */
const MAX_TASK_MS = 7 * 24 * 3600 * 1000;
/** Health checks run at most this far apart, whatever interval the definition says (docs/deploy.md). */
const MAX_HEALTH_INTERVAL_MS = 1000;

interface ContainerDefinition {
  name: string;
  command?: string[];
  entryPoint?: string[];
  essential?: boolean;
  environment?: { name: string; value: string }[];
  secrets?: { name: string; valueFrom: string }[];
  dependsOn?: { containerName: string; condition: string }[];
  portMappings?: { containerPort: number }[];
  healthCheck?: {
    command: string[];
    interval?: number;
    timeout?: number;
    retries?: number;
    startPeriod?: number;
  };
  logConfiguration?: { logDriver: string; options?: Record<string, string> };
}

interface TaskDefinition {
  arn: string;
  family: string;
  revision: number;
  containerDefinitions: ContainerDefinition[];
  memoryMib: number;
  raw: Record<string, unknown>;
}

interface Deployment {
  id: string;
  taskDefinition: TaskDefinition;
  createdAt: number;
}

interface EmulatedService {
  arn: string;
  name: string;
  clusterArn: string;
  status: 'ACTIVE' | 'DRAINING' | 'INACTIVE';
  desiredCount: number;
  deployments: Deployment[];
  loadBalancers: { targetGroupArn: string; containerName: string; containerPort: number }[];
  createdAt: number;
  raw: Record<string, unknown>;
  failures: number;
  nextLaunchAt: number;
  timer?: NodeJS.Timeout;
}

interface ContainerState {
  name: string;
  lastStatus: 'PENDING' | 'RUNNING' | 'STOPPED';
  exitCode?: number;
  healthStatus: 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY';
}

interface ServiceTask {
  id: string;
  arn: string;
  service: EmulatedService;
  deploymentId: string;
  definition: TaskDefinition;
  lastStatus: 'PROVISIONING' | 'PENDING' | 'RUNNING' | 'STOPPED';
  desiredStatus: 'RUNNING' | 'STOPPED';
  healthStatus: 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY';
  containers: ContainerState[];
  createdAt: number;
  startedAt?: number;
  stoppingAt?: number;
  stoppedAt?: number;
  stopCode?: string;
  stoppedReason?: string;
  hostPort?: number;
  session?: SandboxSession;
  abort: AbortController;
  version: number;
  registered: boolean;
}

export interface EcsServiceEmulatorOptions {
  sandbox: Sandbox;
  /** Host loopback ports a task may reach (the S3 emulator's). */
  hostPorts: number[];
  region: string;
  accountId: string;
  /** A free host loopback port, for a task's published container port. */
  freePort: () => Promise<number>;
  /** GetSecretValue of a container secret's valueFrom, as the task execution role reads it. */
  secretValue: (valueFrom: string) => Promise<string>;
  /** The awslogs driver: one line of a stream. */
  putLogLine: (group: string, stream: string, line: string) => void;
  /** ECS registering and deregistering a task's container port in a target group. */
  registerTarget: (targetGroupArn: string, id: string, port: number) => void;
  deregisterTarget: (targetGroupArn: string, id: string) => void;
  /** An "ECS Task State Change" event's detail, for EventBridge. */
  taskStateChange: (detail: Record<string, unknown>, resources: string[]) => Promise<void>;
  log?: (line: string) => void;
}

type Body = Record<string, unknown>;

const invalid = (message: string) => new AwsWireError('InvalidParameterException', 400, message);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);

export class EcsServiceEmulator {
  private readonly o: EcsServiceEmulatorOptions;
  private readonly definitions = new Map<string, TaskDefinition>();
  private readonly revisions = new Map<string, number>();
  private readonly services = new Map<string, EmulatedService>();
  private readonly tasks = new Map<string, ServiceTask>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(options: EcsServiceEmulatorOptions) {
    this.o = options;
  }

  /** The operations for EcsEmulator.addOperations. */
  operations(): Record<string, (body: Body) => unknown> {
    return {
      RegisterTaskDefinition: (b) => this.registerTaskDefinition(b),
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
    const name = typeof cluster === 'string' && cluster ? cluster : 'default';
    return name.startsWith('arn:')
      ? name
      : `arn:aws:ecs:${this.o.region}:${this.o.accountId}:cluster/${name}`;
  }

  private find(cluster: unknown, service: string): EmulatedService | undefined {
    const name = service.startsWith('arn:') ? (service.split('/').pop() ?? '') : service;
    return this.services.get(`${this.clusterArn(cluster)}|${name}`);
  }

  private registerTaskDefinition(b: Body): unknown {
    const family = String(b.family ?? '');
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(family))
      throw new AwsWireError('ClientException', 400, 'Family is invalid');
    const containers = b.containerDefinitions as ContainerDefinition[] | undefined;
    if (!Array.isArray(containers) || containers.length === 0) {
      throw new AwsWireError('ClientException', 400, 'Container list cannot be empty.');
    }
    if (Buffer.byteLength(JSON.stringify(containers)) > MAX_CONTAINER_DEFINITIONS_BYTES) {
      throw new AwsWireError(
        'ClientException',
        400,
        'Actual length of containerDefinitions exceeds 65536 bytes',
      );
    }
    const revision = (this.revisions.get(family) ?? 0) + 1;
    this.revisions.set(family, revision);
    const arn = `arn:aws:ecs:${this.o.region}:${this.o.accountId}:task-definition/${family}:${revision}`;
    const { tags: _tags, ...rest } = b;
    const def: TaskDefinition = {
      arn,
      family,
      revision,
      containerDefinitions: containers,
      memoryMib: Number(b.memory ?? 512),
      raw: { ...rest, taskDefinitionArn: arn, revision, status: 'ACTIVE', registeredAt: Date.now() / 1000 },
    };
    this.definitions.set(arn, def);
    this.definitions.set(`${family}:${revision}`, def);
    this.definitions.set(family, def);
    return { taskDefinition: def.raw, tags: b.tags ?? [] };
  }

  private definition(ref: unknown): TaskDefinition {
    const def = this.definitions.get(String(ref ?? ''));
    if (!def) throw new AwsWireError('ClientException', 400, 'TaskDefinition not found.');
    return def;
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
      launchType: 'FARGATE',
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
      events: [],
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
        for (let i = current.length; i < desired; i++) this.launch(s, primary);
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

  private launch(s: EmulatedService, deployment: Deployment): void {
    const id = randomUUID().replaceAll('-', '');
    const def = deployment.taskDefinition;
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
    this.emit(task);
    const run = this.run(task)
      .catch((err: unknown) => this.o.log?.(`[ecs] task ${id.slice(0, 8)} failed: ${String(err)}`))
      .finally(() => this.running.delete(run));
    this.running.add(run);
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

  private async containerEnv(c: ContainerDefinition): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    for (const e of c.environment ?? []) env[e.name] = e.value;
    for (const s of c.secrets ?? []) {
      try {
        env[s.name] = await this.o.secretValue(s.valueFrom);
      } catch (err) {
        throw new Error(
          `ResourceInitializationError: unable to pull secrets or registry auth: retrieving secret from ${s.valueFrom}: ${(err as Error).message}`,
        );
      }
    }
    return env;
  }

  private async run(task: ServiceTask): Promise<void> {
    const def = task.definition;
    const containers = def.containerDefinitions;
    const published = containers.flatMap((c) => c.portMappings ?? [])[0]?.containerPort;
    let partial = '';
    try {
      const initContainers: InitContainer[] = [];
      for (const c of containers) {
        const hc = c.healthCheck;
        initContainers.push({
          name: c.name,
          command: [...(c.entryPoint ?? []), ...(c.command ?? [])],
          env: await this.containerEnv(c),
          essential: c.essential !== false,
          dependsOn: c.dependsOn ?? [],
          ...(hc
            ? {
                healthCheck: {
                  command: hc.command,
                  intervalMs: Math.min((hc.interval ?? 30) * 1000, MAX_HEALTH_INTERVAL_MS),
                  timeoutMs: (hc.timeout ?? 5) * 1000,
                  retries: hc.retries ?? 3,
                  startPeriodMs: (hc.startPeriod ?? 0) * 1000,
                },
              }
            : {}),
        });
      }
      if (published !== undefined) task.hostPort = await this.o.freePort();
      task.session = await this.o.sandbox.openSession({
        runId: `ecs-svc-${task.id}`,
        workspaceId: 'ecs-emulator',
        env: {},
        network: 'egress',
        hostLoopbackPorts: this.o.hostPorts,
        limits: {
          ...DEFAULT_SANDBOX_LIMITS,
          cpuSeconds: MAX_TASK_MS / 1000,
          processes: 256,
          memoryBytes: def.memoryMib * 1024 * 1024,
        },
        deadlineMs: Date.now() + MAX_TASK_MS,
      });
      await task.session.writeFile(INIT_FILE, INIT_SOURCE);
      if (task.desiredStatus === 'STOPPED') return;
      task.lastStatus = 'PENDING';
      this.emit(task);
      const spec: InitSpec = {
        containers: initContainers,
        baseEnv: {
          PATH: `${SANDBOX_NODE_DIR}:/usr/local/bin:/usr/bin:/bin`,
          HOME: task.session.workDir,
          LANG: 'C.UTF-8',
          TMPDIR: '/tmp',
        },
        stopTimeoutMs: STOP_TIMEOUT_MS,
        stopFile: STOP_FILE,
      };
      const result = await task.session.exec(`exec node --no-warnings ${task.session.workDir}/${INIT_FILE}`, {
        stdin: JSON.stringify(spec),
        signal: task.abort.signal,
        ...(published !== undefined && task.hostPort !== undefined
          ? { publish: { hostPort: task.hostPort, port: published } }
          : {}),
        onOutput: (stream, chunk) => {
          if (stream === 'stderr') {
            for (const line of chunk.toString('utf8').split('\n'))
              if (line) this.o.log?.(`[ecs ${task.id.slice(0, 8)}] ${line}`);
            return;
          }
          const lines = (partial + chunk.toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) this.onReport(task, line);
        },
      });
      if (partial) this.onReport(task, partial);
      if (result.exitCode !== 0 && !task.stopCode) {
        task.stopCode = 'TaskFailedToStart';
        task.stoppedReason = `The task's init ended with ${result.signal ?? result.exitCode}: ${result.stderrTail.slice(-500)}`;
      }
    } catch (err) {
      task.stopCode ??= 'TaskFailedToStart';
      task.stoppedReason ??= String((err as Error).message ?? err).slice(0, 1000);
      this.o.log?.(`[ecs] task ${task.id.slice(0, 8)}: ${task.stoppedReason}`);
    } finally {
      this.deregister(task);
      await task.session?.close().catch(() => undefined);
      task.session = undefined;
      task.desiredStatus = 'STOPPED';
      task.lastStatus = 'STOPPED';
      task.stoppedAt = Date.now();
      for (const c of task.containers) c.lastStatus = 'STOPPED';
      const s = task.service;
      if (task.stopCode !== 'ServiceSchedulerInitiated') {
        // A task that ended on its own: the next launch of its service waits (ECS's throttle).
        s.failures++;
        s.nextLaunchAt = Date.now() + Math.min(1000 * 2 ** (s.failures - 1), 30_000);
      }
      this.emit(task);
      this.reconcile(s);
    }
  }

  private onReport(task: ServiceTask, line: string): void {
    let r: {
      log?: string;
      line?: string;
      started?: string;
      health?: string;
      status?: string;
      exited?: string;
      code?: number;
    };
    try {
      r = JSON.parse(line);
    } catch {
      return;
    }
    if (r.log !== undefined) {
      const def = task.definition.containerDefinitions.find((c) => c.name === r.log);
      const opts = def?.logConfiguration?.logDriver === 'awslogs' ? def.logConfiguration.options : undefined;
      const group = opts?.['awslogs-group'];
      if (group) {
        const prefix = opts['awslogs-stream-prefix'];
        const stream = prefix ? `${prefix}/${r.log}/${task.id}` : task.id;
        this.o.putLogLine(group, stream, String(r.line ?? ''));
      }
      return;
    }
    const c = task.containers.find((x) => x.name === (r.started ?? r.health ?? r.exited));
    if (!c) return;
    if (r.started !== undefined) {
      c.lastStatus = 'RUNNING';
      if (task.lastStatus !== 'RUNNING' && task.containers.every((x) => x.lastStatus !== 'PENDING')) {
        task.lastStatus = 'RUNNING';
        task.startedAt = Date.now();
        if (task.desiredStatus === 'RUNNING') this.register(task);
        this.emit(task);
      }
    } else if (r.health !== undefined) {
      c.healthStatus = r.status === 'HEALTHY' ? 'HEALTHY' : 'UNHEALTHY';
      const checked = task.definition.containerDefinitions.filter((d) => d.healthCheck).map((d) => d.name);
      const states = task.containers.filter((x) => checked.includes(x.name)).map((x) => x.healthStatus);
      const health = states.includes('UNHEALTHY')
        ? 'UNHEALTHY'
        : states.every((h) => h === 'HEALTHY')
          ? 'HEALTHY'
          : 'UNKNOWN';
      if (health !== task.healthStatus) {
        task.healthStatus = health;
        this.emit(task);
        if (health === 'HEALTHY') task.service.failures = 0;
        if (health === 'UNHEALTHY')
          this.stop(task, 'ServiceSchedulerInitiated', 'Task failed container health checks');
        this.reconcile(task.service);
      }
    } else if (r.exited !== undefined) {
      c.lastStatus = 'STOPPED';
      c.exitCode = r.code;
      const def = task.definition.containerDefinitions.find((d) => d.name === c.name);
      if (def?.essential !== false && task.desiredStatus === 'RUNNING') {
        task.desiredStatus = 'STOPPED';
        task.stopCode = 'EssentialContainerExited';
        task.stoppedReason = `Essential container in task exited`;
        task.stoppingAt = Date.now();
        this.deregister(task);
      }
    }
  }

  private emit(task: ServiceTask): void {
    const s = task.service;
    const detail = {
      clusterArn: s.clusterArn,
      taskArn: task.arn,
      taskDefinitionArn: task.definition.arn,
      group: `service:${s.name}`,
      startedBy: task.deploymentId,
      launchType: 'FARGATE',
      platformVersion: '1.4.0',
      cpu: String(task.definition.raw.cpu ?? ''),
      memory: String(task.definition.raw.memory ?? ''),
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      healthStatus: task.healthStatus,
      createdAt: iso(task.createdAt),
      startedAt: iso(task.startedAt),
      stoppingAt: iso(task.stoppingAt),
      stoppedAt: iso(task.stoppedAt),
      stopCode: task.stopCode,
      stoppedReason: task.stoppedReason,
      containers: task.containers.map((c) => ({
        containerArn: `arn:aws:ecs:${this.o.region}:${this.o.accountId}:container/${task.id}/${c.name}`,
        name: c.name,
        taskArn: task.arn,
        lastStatus: c.lastStatus,
        healthStatus: c.healthStatus,
        ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
      })),
      version: task.version++,
      updatedAt: new Date().toISOString(),
    };
    this.o
      .taskStateChange(JSON.parse(JSON.stringify(detail)), [task.arn])
      .catch((err: unknown) => this.o.log?.(`[ecs] task state change not delivered: ${String(err)}`));
  }
}
