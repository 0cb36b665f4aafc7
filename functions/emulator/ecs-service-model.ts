/**
 * The state of the emulated ECS services (ecs-service-emulator.ts): task definitions, services
 * with their deployments, and the tasks the service scheduler runs, with the options the emulator
 * is built with. Shared by the operations and scheduler and by the task supervision
 * (ecs-service-task.ts).
 */
import type { Sandbox, SandboxSession } from '../ports/sandbox.ts';
import type { CapacityProviderName, EcsTaskLedger } from './ecs-task-ledger.ts';

export interface ContainerDefinition {
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

export interface TaskDefinition {
  arn: string;
  family: string;
  revision: number;
  containerDefinitions: ContainerDefinition[];
  /** Task-level CPU units (a definition without them counts as Fargate's smallest, 256). */
  cpu: number;
  memoryMib: number;
  raw: Record<string, unknown>;
}

export interface Deployment {
  id: string;
  taskDefinition: TaskDefinition;
  createdAt: number;
}

export interface EmulatedService {
  arn: string;
  name: string;
  clusterArn: string;
  status: 'ACTIVE' | 'DRAINING' | 'INACTIVE';
  desiredCount: number;
  deployments: Deployment[];
  loadBalancers: { targetGroupArn: string; containerName: string; containerPort: number }[];
  capacityProviderName: CapacityProviderName;
  /** Its service events, newest first (DescribeServices), as a task it could not place. */
  events: { id: string; createdAt: number; message: string }[];
  createdAt: number;
  raw: Record<string, unknown>;
  failures: number;
  nextLaunchAt: number;
  timer?: NodeJS.Timeout;
}

export interface ContainerState {
  name: string;
  lastStatus: 'PENDING' | 'RUNNING' | 'STOPPED';
  exitCode?: number;
  healthStatus: 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY';
}

export interface ServiceTask {
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
  /** How long a task stays PROVISIONING before its containers start (Fargate's start; 0: at once). */
  taskStartMs?: number;
  /**
   * The account's tasks, shared with EcsEmulator (its `ledger`): service tasks count against the
   * same Fargate vCPU quotas and are listed and described with RunTask's. Without it the services'
   * tasks have a ledger of their own (default quotas), read by no operation.
   */
  ledger?: EcsTaskLedger;
  log?: (line: string) => void;
}
