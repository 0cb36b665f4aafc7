import { randomUUID } from 'node:crypto';
import type { Sandbox, SandboxSession } from '../ports/sandbox.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../ports/sandbox.ts';
import { shellQuote } from '../shared/shell-quote.ts';
import { AwsJsonServer, type JsonOperation } from './aws-json-server.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import {
  EnvironmentFileError,
  type EnvironmentFileLocation,
  environmentFileLocation,
  readEnvironmentFiles,
} from './ecs-environment-files.ts';
import {
  type CapacityProviderName,
  EcsTaskLedger,
  type FargateQuotas,
  VCPU_LIMIT_REASON,
} from './ecs-task-ledger.ts';
import { AwsWireError } from './emulator-http.ts';
import { capacityProvider } from './fargate-capacity-provider.ts';
import { type FargateSize, fargateSize } from './fargate-sizes.ts';
import { waitForTaskStart } from './task-start-delay.ts';

/**
 * ECS for the emulated deployment: the JSON protocol (awsJson1_1, X-Amz-Target
 * AmazonEC2ContainerServiceV20141113.<Operation>) for the operations the sandbox adapter sends
 * (RunTask, DescribeTasks, StopTask) and those an operator's script reads the account with
 * (ListClusters, ListTasks; ecs-task-ledger.ts, which also keeps the account's Fargate vCPU quotas
 * that RunTask answers past as ECS does). A task runs its task definition's one container as written in
 * the template (its EntryPoint and Command, its environment with RunTask's overrides, and the
 * env files those name, read from the S3 emulator as ECS's agent reads them with the execution
 * role: ecs-environment-files.ts) under
 * bubblewrap instead of Fargate: the same program, the runner the ECS sandbox uploads, in a
 * namespace of its own whose only way out is the listed host ports (the S3 emulator's, which the
 * runner's presigned URLs name). Task definitions registered over the wire are not supported:
 * the sandbox's comes from the template. More operations (always-on services) can be registered
 * with `addOperations`.
 */

const TARGET_PREFIX = 'AmazonEC2ContainerServiceV20141113';
/** The longest a task may run here (Fargate has no limit; a sandbox run ends far earlier). */
const MAX_TASK_MS = 60 * 60 * 1000;

interface ContainerDefinition {
  Name: string;
  EntryPoint?: string[];
  Command?: string[];
  Environment?: { Name: string; Value: string }[];
  WorkingDirectory?: string;
}

interface TaskDefinition {
  arn: string;
  family: string;
  containers: ContainerDefinition[];
  /** The task-level size as the template writes it (checked at RunTask, with the overrides). */
  cpu: unknown;
  memory: unknown;
}

interface EmulatedTask {
  taskArn: string;
  clusterArn: string;
  taskDefinitionArn: string;
  startedBy?: string;
  group: string;
  size: FargateSize;
  capacityProviderName: CapacityProviderName;
  lastStatus: 'PENDING' | 'RUNNING' | 'STOPPED';
  desiredStatus: 'RUNNING' | 'STOPPED';
  createdAt: number;
  startedAt?: number;
  stoppedAt?: number;
  stopCode?: string;
  stoppedReason?: string;
  containerName: string;
  exitCode?: number;
  abort: AbortController;
  tags: { key: string; value: string }[];
}

export interface EcsEmulatorOptions {
  resolver: TemplateResolver;
  /** Where tasks run (bubblewrap with egress). */
  sandbox: Sandbox;
  /** Host loopback ports a task may reach (the S3 emulator's). */
  hostPorts: number[];
  region: string;
  accountId: string;
  /** How long a task stays PENDING before its container runs (Fargate's start; 0: at once). */
  taskStartMs?: number;
  /** The account's Fargate vCPU quotas (default 6 each, a new account's). */
  quotas?: FargateQuotas;
  /** Reads an env file's object (bucket, key) for a task's start, as the execution role would. */
  readObject?: (bucket: string, key: string) => Promise<string>;
  log?: (line: string) => void;
}

/** RunTask starts at most 10 tasks a call (ECS's `count`). */
const MAX_COUNT = 10;

export class EcsEmulator {
  private readonly options: EcsEmulatorOptions;
  private readonly definitions = new Map<string, TaskDefinition>();
  private readonly tasks = new Map<string, EmulatedTask>();
  private readonly running = new Set<Promise<void>>();
  private readonly operations: Record<string, JsonOperation> = {};
  private readonly server: AwsJsonServer;
  /** The account's tasks (this emulator's and the services'), its quotas and its read operations. */
  readonly ledger: EcsTaskLedger;

  constructor(options: EcsEmulatorOptions) {
    this.options = options;
    const { resolver } = options;
    this.ledger = new EcsTaskLedger({
      region: options.region,
      accountId: options.accountId,
      ...(options.quotas ? { quotas: options.quotas } : {}),
      clusters: resolver
        .resourcesOfType('AWS::ECS::Cluster')
        .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId)),
    });
    for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::ECS::TaskDefinition')) {
      const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
        ContainerDefinitions?: ContainerDefinition[];
        Cpu?: string;
        Memory?: string;
      };
      const arn = String(resolver.resolve(stack, { Ref: logicalId }, logicalId));
      const family = resolver.physicalName(stack, logicalId);
      const def = {
        arn,
        family,
        containers: p.ContainerDefinitions ?? [],
        cpu: p.Cpu,
        memory: p.Memory,
      };
      this.definitions.set(arn, def);
      this.definitions.set(family, def);
      this.definitions.set(`${family}:1`, def);
    }
    this.operations.RunTask = (b) => this.runTask(b);
    this.operations.StopTask = (b) => this.stopTask(b);
    Object.assign(this.operations, this.ledger.operations());
    this.server = new AwsJsonServer(TARGET_PREFIX, this.operations);
  }

  /** Adds operations (by name, as in X-Amz-Target) served on the same endpoint. */
  addOperations(operations: Record<string, JsonOperation>): void {
    // The server reads this record on each request, so operations added later are served too.
    Object.assign(this.operations, operations);
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  /** Stops every task and waits for them to end. */
  async close(): Promise<void> {
    for (const task of this.tasks.values()) task.abort.abort();
    await Promise.allSettled([...this.running]);
    await this.server.close();
  }

  private runTask(body: Record<string, unknown>): unknown {
    const definition = this.definitions.get(String(body.taskDefinition ?? ''));
    if (!definition) {
      throw new AwsWireError(
        'ClientException',
        400,
        `Unable to find task definition ${String(body.taskDefinition)}`,
      );
    }
    const container = definition.containers[0];
    if (!container || definition.containers.length !== 1) {
      throw new AwsWireError(
        'ClientException',
        400,
        'The emulator runs task definitions with exactly one container',
      );
    }
    const count = body.count === undefined ? 1 : Number(body.count);
    if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
      throw new AwsWireError('InvalidParameterException', 400, 'Count must be between 1 and 10.');
    }
    const provider = capacityProvider(body);
    const overrides = (body.overrides ?? {}) as {
      cpu?: string;
      memory?: string;
      containerOverrides?: {
        name?: string;
        environment?: { name: string; value: string }[];
        environmentFiles?: { type?: string; value?: string }[];
      }[];
    };
    // The task's size: the overrides' where given, else the definition's (ECS's taskOverride).
    const size = fargateSize(overrides.cpu ?? definition.cpu, overrides.memory ?? definition.memory);
    const clusterArn = this.ledger.useCluster(body.cluster);
    const clusterName = clusterArn.split('/').pop() as string;
    const containerOverride = (overrides.containerOverrides ?? []).find((o) => o.name === container.Name);
    const envFiles = (containerOverride?.environmentFiles ?? []).map(environmentFileLocation);
    const env: Record<string, string> = {};
    for (const e of container.Environment ?? []) env[e.Name] = e.Value;
    for (const e of containerOverride?.environment ?? []) env[e.name] = e.value;
    const command = [...(container.EntryPoint ?? []), ...(container.Command ?? [])].map(shellQuote).join(' ');
    const tasks: unknown[] = [];
    const failures: unknown[] = [];
    for (let i = 0; i < count; i++) {
      if (!this.ledger.fits(provider, size.cpu)) {
        failures.push({ reason: VCPU_LIMIT_REASON });
        continue;
      }
      const id = randomUUID().replaceAll('-', '');
      const task: EmulatedTask = {
        taskArn: `arn:aws:ecs:${this.options.region}:${this.options.accountId}:task/${clusterName}/${id}`,
        clusterArn,
        taskDefinitionArn: definition.arn,
        ...(typeof body.startedBy === 'string' ? { startedBy: body.startedBy } : {}),
        // ECS's default group of a standalone task is its definition's family.
        group: typeof body.group === 'string' && body.group ? body.group : `family:${definition.family}`,
        size,
        capacityProviderName: provider,
        lastStatus: 'PENDING',
        desiredStatus: 'RUNNING',
        createdAt: Date.now(),
        containerName: container.Name,
        abort: new AbortController(),
        tags: (body.tags as { key: string; value: string }[] | undefined) ?? [],
      };
      this.tasks.set(task.taskArn, task);
      this.ledger.add({
        arn: task.taskArn,
        clusterArn,
        family: definition.family,
        ...(task.startedBy !== undefined ? { startedBy: task.startedBy } : {}),
        cpu: size.cpu,
        capacityProviderName: provider,
        createdAt: task.createdAt,
        state: () => task,
        describe: () => this.describe(task),
        forget: () => this.tasks.delete(task.taskArn),
      });
      const run = this.start(task, command, env, envFiles).finally(() => this.running.delete(run));
      this.running.add(run);
      tasks.push(this.describe(task));
    }
    return { tasks, failures };
  }

  private async start(
    task: EmulatedTask,
    command: string,
    env: Record<string, string>,
    envFiles: EnvironmentFileLocation[],
  ) {
    let session: SandboxSession | undefined;
    try {
      // Stopped while still starting: no container ran, as StopTask on a PENDING Fargate task.
      if (!(await waitForTaskStart(this.options.taskStartMs ?? 0, task.abort.signal))) return;
      // The env files' variables, under those set directly (which win, as on ECS).
      const fromFiles = await readEnvironmentFiles(envFiles, this.options.readObject);
      session = await this.options.sandbox.openSession({
        runId: `ecs-${task.taskArn.split('/').pop()}`,
        workspaceId: 'ecs-emulator',
        env: { ...fromFiles, ...env },
        network: 'egress',
        hostLoopbackPorts: this.options.hostPorts,
        limits: { ...DEFAULT_SANDBOX_LIMITS, memoryBytes: task.size.memory * 1024 * 1024 },
        deadlineMs: Date.now() + MAX_TASK_MS,
      });
      task.lastStatus = 'RUNNING';
      task.startedAt = Date.now();
      const result = await session.exec(`exec ${command}`, {
        signal: task.abort.signal,
        onOutput: (_stream, chunk) => {
          for (const line of chunk.toString('utf8').split('\n')) {
            if (line) this.options.log?.(`[ecs ${task.taskArn.split('/').pop()?.slice(0, 8)}] ${line}`);
          }
        },
      });
      task.exitCode = result.exitCode ?? 137;
      task.stopCode ??= 'EssentialContainerExited';
      task.stoppedReason ??= 'Essential container in task exited';
    } catch (err) {
      task.stopCode = 'TaskFailedToStart';
      task.stoppedReason =
        err instanceof EnvironmentFileError
          ? err.message
          : `The task could not start: ${String((err as Error).message ?? err)}`;
      this.options.log?.(`[ecs] ${task.stoppedReason}`);
    } finally {
      await session?.close().catch(() => undefined);
      task.lastStatus = 'STOPPED';
      task.desiredStatus = 'STOPPED';
      task.stoppedAt = Date.now();
    }
  }

  private stopTask(body: Record<string, unknown>): unknown {
    const ref = String(body.task ?? '');
    const found = this.ledger.find(body.cluster, ref);
    const task = found ? this.tasks.get(found.arn) : undefined;
    if (!task) throw new AwsWireError('InvalidParameterException', 400, 'The referenced task was not found.');
    if (task.lastStatus !== 'STOPPED') {
      task.desiredStatus = 'STOPPED';
      task.stopCode = 'UserInitiated';
      task.stoppedReason = typeof body.reason === 'string' ? body.reason : 'Task stopped by user';
      task.abort.abort();
    }
    return { task: this.describe(task) };
  }

  /**
   * The task as DescribeTasks gives it, with what an operator reads of its size and time: cpu and
   * memory as strings (ECS's), its capacity provider, and the image pull's times that Fargate's
   * bill starts from. The emulator's start delay stands for the ENI, the pull and the container's
   * start at once, so the pull is shown from the task's placement to its start (at most the ENI's
   * few seconds earlier than on AWS).
   */
  private describe(task: EmulatedTask): Record<string, unknown> {
    const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
    return {
      taskArn: task.taskArn,
      clusterArn: task.clusterArn,
      taskDefinitionArn: task.taskDefinitionArn,
      group: task.group,
      cpu: String(task.size.cpu),
      memory: String(task.size.memory),
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      launchType: 'FARGATE',
      capacityProviderName: task.capacityProviderName,
      platformVersion: '1.4.0',
      createdAt: seconds(task.createdAt),
      pullStartedAt: seconds(task.createdAt),
      pullStoppedAt: seconds(task.startedAt),
      startedAt: seconds(task.startedAt),
      stoppedAt: seconds(task.stoppedAt),
      stopCode: task.stopCode,
      stoppedReason: task.stoppedReason,
      startedBy: task.startedBy,
      tags: task.tags,
      containers: [
        {
          name: task.containerName,
          lastStatus: task.lastStatus,
          ...(task.exitCode !== undefined ? { exitCode: task.exitCode } : {}),
        },
      ],
    };
  }
}
