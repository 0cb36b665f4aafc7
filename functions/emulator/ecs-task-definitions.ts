import type { ContainerDefinition, TaskDefinition } from './ecs-service-model.ts';
import { AwsWireError } from './emulator-http.ts';
import { fargateSize } from './fargate-sizes.ts';

/**
 * The task definitions registered over the wire (RegisterTaskDefinition), which the emulated ECS
 * services run (ecs-service-emulator.ts): each family's revisions, found by ARN, `family:revision`
 * or family (its newest). One for Fargate must have one of Fargate's sizes, as ECS checks at
 * registration.
 */

/** Container definitions of a task definition must fit in 64 KiB. */
const MAX_CONTAINER_DEFINITIONS_BYTES = 64 * 1024;
/** Fargate's smallest task (CPU units), what a definition without a task-level cpu counts as. */
const SMALLEST_CPU = 256;

export class TaskDefinitions {
  private readonly account: { region: string; accountId: string };
  private readonly definitions = new Map<string, TaskDefinition>();
  private readonly revisions = new Map<string, number>();

  constructor(account: { region: string; accountId: string }) {
    this.account = account;
  }

  register(b: Record<string, unknown>): unknown {
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
    const fargate = Array.isArray(b.requiresCompatibilities) && b.requiresCompatibilities.includes('FARGATE');
    const size = fargate ? fargateSize(b.cpu, b.memory) : undefined;
    const revision = (this.revisions.get(family) ?? 0) + 1;
    this.revisions.set(family, revision);
    const arn = `arn:aws:ecs:${this.account.region}:${this.account.accountId}:task-definition/${family}:${revision}`;
    const { tags: _tags, ...rest } = b;
    const def: TaskDefinition = {
      arn,
      family,
      revision,
      containerDefinitions: containers,
      // One not for Fargate could not run there; the emulator runs it, counted at Fargate's smallest.
      cpu: size?.cpu ?? (Number(b.cpu) || SMALLEST_CPU),
      memoryMib: size?.memory ?? Number(b.memory ?? 512),
      raw: { ...rest, taskDefinitionArn: arn, revision, status: 'ACTIVE', registeredAt: Date.now() / 1000 },
    };
    this.definitions.set(arn, def);
    this.definitions.set(`${family}:${revision}`, def);
    this.definitions.set(family, def);
    return { taskDefinition: def.raw, tags: b.tags ?? [] };
  }

  get(ref: unknown): TaskDefinition {
    const def = this.definitions.get(String(ref ?? ''));
    if (!def) throw new AwsWireError('ClientException', 400, 'TaskDefinition not found.');
    return def;
  }
}
