import type { TemplateResolver } from './cloudformation-template.ts';
import type { DeploymentMeter } from './deployment-meter.ts';
import { type Exchange, MeteringProxy } from './metering-proxy.ts';

/*
 * What the meter reads off the DynamoDB and ECS wires (metering-proxy.ts).
 */

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const DATA_OPERATIONS = new Set([
  ...READS,
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'ExecuteStatement',
]);

interface Consumed {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/**
 * One DynamoDB exchange: the request units its answer's ConsumedCapacity reports (one object, or
 * one per table for transactions and batches). DynamoDB Local reports them for every item
 * operation, transactions and batches included, as DynamoDB counts them (4 KB reads, 1 KB writes,
 * index writes in TOTAL, transactions doubled), except a transaction of several items of one size
 * (see below). A refused conditional write carries no figure but is billed: counted apart.
 */
export function meterDynamoDb(meter: DeploymentMeter): Exchange {
  return (operation, request, status, answer) => {
    if (!DATA_OPERATIONS.has(operation)) return;
    const a = (answer ?? {}) as { ConsumedCapacity?: Consumed | Consumed[]; __type?: string };
    if (status !== 200) {
      const type = String(a.__type ?? '');
      if (type.endsWith('ConditionalCheckFailedException') || type.endsWith('TransactionCanceledException'))
        meter.dynamodbConditionFailure();
      return;
    }
    if (a.ConsumedCapacity === undefined) {
      meter.dynamodbRequest(operation, undefined);
      return;
    }
    let read = 0;
    let write = 0;
    for (const c of [a.ConsumedCapacity].flat()) {
      if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
        read += c.ReadCapacityUnits ?? 0;
        write += c.WriteCapacityUnits ?? 0;
      } else if (READS.has(operation)) read += c.CapacityUnits ?? 0;
      else write += c.CapacityUnits ?? 0;
    }
    if (operation === 'TransactWriteItems') {
      // DynamoDB Local reports a transaction of same-sized items as if it held one; DynamoDB bills
      // every action of it at least 2 WRU (two phases, a KB or less): that floor is taken.
      const actions = ((request ?? {}) as { TransactItems?: unknown[] }).TransactItems?.length ?? 0;
      write = Math.max(write, 2 * actions);
    }
    meter.dynamodbRequest(operation, { read, write });
  };
}

export interface TaskSize {
  vcpu: number;
  memoryGb: number;
}

/**
 * ECS's RunTask and DescribeTasks answers: each task's start and stop, its size (the answer's cpu
 * and memory where ECS gives them, else its task definition's) and capacity provider.
 */
export function meterEcs(
  meter: DeploymentMeter,
  sizeOf: (taskDefinitionArn: string) => TaskSize | undefined,
): Exchange {
  return (operation, _request, status, answer) => {
    if (status !== 200 || (operation !== 'RunTask' && operation !== 'DescribeTasks')) return;
    for (const t of ((answer ?? {}) as { tasks?: DescribedTask[] }).tasks ?? []) recordTask(meter, t, sizeOf);
  };
}

export interface DescribedTask {
  taskArn?: string;
  taskDefinitionArn?: string;
  cpu?: string;
  memory?: string;
  capacityProviderName?: string;
  /** Epoch seconds, as the JSON protocol carries ECS's timestamps. */
  createdAt?: number;
  stoppedAt?: number;
}

export function recordTask(
  meter: DeploymentMeter,
  t: DescribedTask,
  sizeOf: (taskDefinitionArn: string) => TaskSize | undefined,
): void {
  if (!t.taskArn || t.createdAt === undefined) return;
  const size =
    t.cpu !== undefined && t.memory !== undefined
      ? { vcpu: Number(t.cpu) / 1024, memoryGb: Number(t.memory) / 1024 }
      : sizeOf(t.taskDefinitionArn ?? '');
  if (!size) return;
  meter.fargateTask({
    taskArn: t.taskArn,
    ...size,
    capacityProvider: t.capacityProviderName ?? 'FARGATE',
    createdAt: t.createdAt * 1000,
    stoppedAt: t.stoppedAt === undefined ? undefined : t.stoppedAt * 1000,
  });
}

/** `target` behind a metering pass-through, closed with the deployment. */
export async function meteredEndpoint(
  target: string,
  observe: Exchange,
  closers: (() => Promise<void>)[],
): Promise<string> {
  const proxy = new MeteringProxy(target, observe);
  const endpoint = await proxy.listen();
  closers.push(() => proxy.close());
  return endpoint;
}

/** Each task definition's size, by the ARN RunTask answers with. */
export function taskSizes(resolver: TemplateResolver): (taskDefinitionArn: string) => TaskSize | undefined {
  const sizes = new Map<string, TaskSize>();
  for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::ECS::TaskDefinition')) {
    const p = resource.Properties ?? {};
    sizes.set(String(resolver.resolve(stack, { Ref: logicalId }, logicalId)), {
      vcpu: Number(p.Cpu ?? 1024) / 1024,
      memoryGb: Number(p.Memory ?? 2048) / 1024,
    });
  }
  return (arn) => sizes.get(arn);
}

/** DescribeTasks for the tasks the meter has not seen stop, through the metered endpoint. */
export async function describeOpenTasks(meter: DeploymentMeter, ecsEndpoint: string): Promise<void> {
  const open = meter.openTasks();
  if (open.length === 0) return;
  const res = await fetch(ecsEndpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'AmazonEC2ContainerServiceV20141113.DescribeTasks',
    },
    body: JSON.stringify({ tasks: open }),
  });
  await res.arrayBuffer();
}
