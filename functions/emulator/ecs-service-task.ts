/**
 * The supervision of one emulated ECS service task (ecs-service-emulator.ts): its containers'
 * environment (secrets resolved at start), its bubblewrap session running the init
 * (ecs-task-init.ts), the init's reports of containers starting, health and exits, and the
 * "ECS Task State Change" detail each change of the task becomes.
 */
import { readFileSync } from 'node:fs';
import { SANDBOX_NODE_DIR } from '../adapters/local/bwrap/filesystem-view.ts';
import { execPublished } from '../adapters/local/listening-ports.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../ports/sandbox.ts';
import type {
  ContainerDefinition,
  EcsServiceEmulatorOptions,
  EmulatedService,
  ServiceTask,
} from './ecs-service-model.ts';
import type { InitContainer, InitSpec } from './ecs-task-init.ts';
import { waitForTaskStart } from './task-start-delay.ts';

const INIT_SOURCE = readFileSync(new URL('./ecs-task-init.ts', import.meta.url), 'utf8');
const INIT_FILE = '.ecs-task-init.ts';
export const STOP_FILE = '.ecs-stop';
/** ECS's default: SIGTERM, then SIGKILL 30 s later. */
export const STOP_TIMEOUT_MS = 30_000;
/** How long a service task may run here (a sandbox needs a deadline). */
const MAX_TASK_MS = 7 * 24 * 3600 * 1000;
/** Health checks run at most this far apart, whatever interval the definition says (docs/deploy.md). */
const MAX_HEALTH_INTERVAL_MS = 1000;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** What a task's supervision needs of the emulator: its options and its scheduler's steps. */
export interface ServiceTaskHost {
  options: EcsServiceEmulatorOptions;
  register(t: ServiceTask): void;
  deregister(t: ServiceTask): void;
  stop(t: ServiceTask, stopCode: string, reason: string): void;
  emit(t: ServiceTask): void;
  reconcile(s: EmulatedService): void;
}

async function containerEnv(host: ServiceTaskHost, c: ContainerDefinition): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const e of c.environment ?? []) env[e.name] = e.value;
  for (const s of c.secrets ?? []) {
    try {
      env[s.name] = await host.options.secretValue(s.valueFrom);
    } catch (err) {
      throw new Error(
        `ResourceInitializationError: unable to pull secrets or registry auth: retrieving secret from ${s.valueFrom}: ${(err as Error).message}`,
      );
    }
  }
  return env;
}

/** A container of the task definition as the task's init runs it (ecs-task-init.ts). */
async function initContainer(host: ServiceTaskHost, c: ContainerDefinition): Promise<InitContainer> {
  const hc = c.healthCheck;
  return {
    name: c.name,
    command: [...(c.entryPoint ?? []), ...(c.command ?? [])],
    env: await containerEnv(host, c),
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
  };
}

/** What the task's init is given: its containers, the environment they share, how to stop. */
function initSpec(containers: InitContainer[], workDir: string): InitSpec {
  return {
    containers,
    baseEnv: {
      PATH: `${SANDBOX_NODE_DIR}:/usr/local/bin:/usr/bin:/bin`,
      HOME: workDir,
      LANG: 'C.UTF-8',
      TMPDIR: '/tmp',
    },
    stopTimeoutMs: STOP_TIMEOUT_MS,
    stopFile: STOP_FILE,
  };
}

export async function runServiceTask(host: ServiceTaskHost, task: ServiceTask): Promise<void> {
  const def = task.definition;
  const containers = def.containerDefinitions;
  const published = containers.flatMap((c) => c.portMappings ?? [])[0]?.containerPort;
  let partial = '';
  try {
    // Stopped while still provisioning: it ends without its containers ever starting.
    if (!(await waitForTaskStart(host.options.taskStartMs ?? 0, task.abort.signal))) return;
    const initContainers: InitContainer[] = [];
    for (const c of containers) initContainers.push(await initContainer(host, c));
    if (published !== undefined) task.hostPort = await host.options.freePort();
    task.session = await host.options.sandbox.openSession({
      runId: `ecs-svc-${task.id}`,
      workspaceId: 'ecs-emulator',
      env: {},
      network: 'egress',
      hostLoopbackPorts: host.options.hostPorts,
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
    host.emit(task);
    const spec = initSpec(initContainers, task.session.workDir);
    const onOutput = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
      if (stream === 'stderr') {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line) host.options.log?.(`[ecs ${task.id.slice(0, 8)}] ${line}`);
        return;
      }
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onReport(host, task, line);
    };
    const session = task.session;
    const init = (publish?: { hostPort: number; port: number }) =>
      session.exec(`exec node --no-warnings ${session.workDir}/${INIT_FILE}`, {
        stdin: JSON.stringify(spec),
        signal: task.abort.signal,
        ...(publish ? { publish } : {}),
        onOutput,
      });
    // A Fargate task has its own address, so its port is never taken; here the host port chosen
    // for it may be taken before the sandbox binds it, and then another is chosen.
    const result =
      published !== undefined && task.hostPort !== undefined
        ? await execPublished(task.hostPort, host.options.freePort, (hostPort) => {
            // Stopped while a port was being bound: its containers must not start on the next one.
            if (task.desiredStatus === 'STOPPED') throw new Error('stopped before its containers started');
            task.hostPort = hostPort;
            return init({ hostPort, port: published });
          })
        : await init();
    if (partial) onReport(host, task, partial);
    if (result.exitCode !== 0 && !task.stopCode) {
      task.stopCode = 'TaskFailedToStart';
      task.stoppedReason = `The task's init ended with ${result.signal ?? result.exitCode}: ${result.stderrTail.slice(-500)}`;
    }
  } catch (err) {
    task.stopCode ??= 'TaskFailedToStart';
    task.stoppedReason ??= String((err as Error).message ?? err).slice(0, 1000);
    host.options.log?.(`[ecs] task ${task.id.slice(0, 8)}: ${task.stoppedReason}`);
  } finally {
    host.deregister(task);
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
    host.emit(task);
    host.reconcile(s);
  }
}

function onReport(host: ServiceTaskHost, task: ServiceTask, line: string): void {
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
      host.options.putLogLine(group, stream, String(r.line ?? ''));
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
      if (task.desiredStatus === 'RUNNING') host.register(task);
      host.emit(task);
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
      host.emit(task);
      if (health === 'HEALTHY') task.service.failures = 0;
      if (health === 'UNHEALTHY')
        host.stop(task, 'ServiceSchedulerInitiated', 'Task failed container health checks');
      host.reconcile(task.service);
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
      host.deregister(task);
    }
  }
}

/** The "ECS Task State Change" event's detail for the task as it is now (its version counts up). */
export function taskStateChangeDetail(
  task: ServiceTask,
  region: string,
  accountId: string,
): Record<string, unknown> {
  const s = task.service;
  const detail = {
    clusterArn: s.clusterArn,
    taskArn: task.arn,
    taskDefinitionArn: task.definition.arn,
    group: `service:${s.name}`,
    startedBy: task.deploymentId,
    launchType: 'FARGATE',
    capacityProviderName: s.capacityProviderName,
    platformVersion: '1.4.0',
    cpu: String(task.definition.cpu),
    memory: String(task.definition.memoryMib),
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
      containerArn: `arn:aws:ecs:${region}:${accountId}:container/${task.id}/${c.name}`,
      name: c.name,
      taskArn: task.arn,
      lastStatus: c.lastStatus,
      healthStatus: c.healthStatus,
      ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
    })),
    version: task.version++,
    updatedAt: new Date().toISOString(),
  };
  return JSON.parse(JSON.stringify(detail));
}

/**
 * The task as DescribeTasks gives it (dates in epoch seconds). Its image pull is shown from its
 * placement to its start, as the start delay stands for the ENI, the pull and the containers'
 * start at once (ecs-emulator.ts says the same of RunTask's tasks).
 */
export function describeServiceTask(
  task: ServiceTask,
  region: string,
  accountId: string,
): Record<string, unknown> {
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  const s = task.service;
  return JSON.parse(
    JSON.stringify({
      taskArn: task.arn,
      clusterArn: s.clusterArn,
      taskDefinitionArn: task.definition.arn,
      group: `service:${s.name}`,
      startedBy: task.deploymentId,
      cpu: String(task.definition.cpu),
      memory: String(task.definition.memoryMib),
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      healthStatus: task.healthStatus,
      launchType: 'FARGATE',
      capacityProviderName: s.capacityProviderName,
      platformVersion: '1.4.0',
      createdAt: seconds(task.createdAt),
      pullStartedAt: seconds(task.createdAt),
      pullStoppedAt: seconds(task.startedAt),
      startedAt: seconds(task.startedAt),
      stoppingAt: seconds(task.stoppingAt),
      stoppedAt: seconds(task.stoppedAt),
      stopCode: task.stopCode,
      stoppedReason: task.stoppedReason,
      containers: task.containers.map((c) => ({
        containerArn: `arn:aws:ecs:${region}:${accountId}:container/${task.id}/${c.name}`,
        name: c.name,
        taskArn: task.arn,
        lastStatus: c.lastStatus,
        healthStatus: c.healthStatus,
        ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
      })),
    }),
  );
}
