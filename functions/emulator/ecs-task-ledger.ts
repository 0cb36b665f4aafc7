import { AwsWireError } from './emulator-http.ts';

/**
 * The emulated account's ECS tasks, whoever started them (RunTask in ecs-emulator.ts, a service's
 * scheduler in ecs-service-emulator.ts): the account's Fargate vCPU quotas they count against, and
 * the read operations an operator's script uses to see them (ListClusters, ListTasks,
 * DescribeTasks), served on the ECS emulator's endpoint.
 *
 * The quotas are AWS's "Fargate On-Demand vCPU resource count" and "Fargate Spot vCPU resource
 * count" (Amazon ECS service quotas; https://docs.aws.amazon.com/AmazonECS/latest/developerguide/service-quotas.html#service-quotas-fargate):
 * the vCPUs of the Fargate tasks an account runs at once in a Region, on-demand and Spot counted
 * apart. A task holds its vCPUs from the moment it is placed (PROVISIONING and PENDING, its ENI and
 * image pull, as much as RUNNING) until it has STOPPED; a task asked to stop still holds them while
 * its containers exit. A new account's on-demand quota is about 6; the emulated
 * deployment's is PLATFORM_EMULATOR_FARGATE_VCPU_QUOTA (docs/deploy.md).
 *
 * Stopped tasks stay listable and describable for an hour after they stopped, then are forgotten:
 * ECS documents "stopped tasks appear in the returned results for at least one hour" (ListTasks,
 * DescribeTasks in the Amazon ECS API Reference), so a script reading usage after the fact must
 * read within the hour there too.
 */

export type CapacityProviderName = 'FARGATE' | 'FARGATE_SPOT';

/**
 * RunTask's refusal of a task past the quota. ECS answers it as a placement failure, not an error:
 * HTTP 200, no task, and `failures: [{ reason }]` with this reason and no ARN (the troubleshooting
 * guide's "You’ve reached the limit on the number of vCPUs you can run concurrently", with its
 * typographic apostrophe, as code matching the real answer spells it, e.g. hyperflow-wms's Fargate
 * executor; a Fargate capacity failure of RunTask carries no ARN, as gchq/sleeper#904's log shows).
 * A service's scheduler says the same in its events: "(service x) was unable to place a task.
 * Reason: …".
 */
export const VCPU_LIMIT_REASON = 'You’ve reached the limit on the number of vCPUs you can run concurrently';

/** A new account's Fargate vCPU quota, on-demand and Spot alike. */
export const DEFAULT_FARGATE_VCPU_QUOTA = 6;

/** How long a stopped task stays in ListTasks and DescribeTasks (ECS: at least an hour). */
export const STOPPED_TASK_RETENTION_MS = 60 * 60 * 1000;

/** ListTasks' and ListClusters' page size: 100 unless maxResults says fewer (1 to 100). */
const MAX_PAGE = 100;
/** DescribeTasks takes at most 100 tasks. */
const MAX_DESCRIBE = 100;

/** One task as the ledger sees it; the emulator that runs it keeps the rest. */
export interface LedgerTask {
  arn: string;
  clusterArn: string;
  family: string;
  startedBy?: string;
  serviceName?: string;
  /** CPU units (1024 a vCPU). */
  cpu: number;
  capacityProviderName: CapacityProviderName;
  createdAt: number;
  /** Its status now. */
  state(): { lastStatus: string; desiredStatus: 'RUNNING' | 'STOPPED'; stoppedAt?: number };
  /** Its DescribeTasks record (dates in epoch seconds, as the JSON protocol carries them). */
  describe(): Record<string, unknown>;
  /** Called when it is forgotten, an hour after it stopped. */
  forget?: () => void;
}

export interface FargateQuotas {
  /** vCPUs of FARGATE tasks at once. */
  onDemandVcpu: number;
  /** vCPUs of FARGATE_SPOT tasks at once. */
  spotVcpu: number;
}

export interface EcsTaskLedgerOptions {
  region: string;
  accountId: string;
  /** Default: DEFAULT_FARGATE_VCPU_QUOTA each. */
  quotas?: FargateQuotas;
  /** Clusters that exist before any task runs (the template's). */
  clusters?: string[];
  stoppedTaskRetentionMs?: number;
}

type Body = Record<string, unknown>;

const invalid = (message: string) => new AwsWireError('InvalidParameterException', 400, message);

export class EcsTaskLedger {
  private readonly o: EcsTaskLedgerOptions;
  private readonly tasks = new Map<string, LedgerTask>();
  private readonly clusters = new Set<string>();

  constructor(options: EcsTaskLedgerOptions) {
    this.o = options;
    for (const c of options.clusters ?? []) this.clusters.add(this.clusterArn(c));
  }

  /** A cluster name or ARN as its ARN; none is the account's `default` cluster, as in ECS. */
  clusterArn(cluster: unknown): string {
    const name = typeof cluster === 'string' && cluster ? cluster : 'default';
    return name.startsWith('arn:')
      ? name
      : `arn:aws:ecs:${this.o.region}:${this.o.accountId}:cluster/${name}`;
  }

  /** A cluster comes to exist when a task or service first uses it (the emulator creates none apart). */
  useCluster(cluster: unknown): string {
    const arn = this.clusterArn(cluster);
    this.clusters.add(arn);
    return arn;
  }

  /** vCPUs held now by the tasks of this capacity provider. */
  vcpusInUse(provider: CapacityProviderName): number {
    this.prune();
    let units = 0;
    for (const t of this.tasks.values()) {
      if (t.capacityProviderName === provider && t.state().lastStatus !== 'STOPPED') units += t.cpu;
    }
    return units / 1024;
  }

  /** Whether a task of `cpu` units fits under its provider's quota now. */
  fits(provider: CapacityProviderName, cpu: number): boolean {
    const quotas = this.o.quotas ?? {
      onDemandVcpu: DEFAULT_FARGATE_VCPU_QUOTA,
      spotVcpu: DEFAULT_FARGATE_VCPU_QUOTA,
    };
    const quota = provider === 'FARGATE_SPOT' ? quotas.spotVcpu : quotas.onDemandVcpu;
    return this.vcpusInUse(provider) + cpu / 1024 <= quota;
  }

  add(task: LedgerTask): void {
    this.clusters.add(task.clusterArn);
    this.tasks.set(task.arn, task);
  }

  /** A task of a cluster by its ARN or its ID, as DescribeTasks and StopTask name them. */
  find(cluster: unknown, ref: string): LedgerTask | undefined {
    this.prune();
    const clusterArn = this.clusterArn(cluster);
    const task = this.tasks.get(ref) ?? [...this.tasks.values()].find((t) => t.arn.split('/').pop() === ref);
    return task?.clusterArn === clusterArn ? task : undefined;
  }

  /** The read operations, for EcsEmulator.addOperations. */
  operations(): Record<'ListClusters' | 'ListTasks' | 'DescribeTasks', (body: Body) => unknown> {
    return {
      ListClusters: (b) => this.listClusters(b),
      ListTasks: (b) => this.listTasks(b),
      DescribeTasks: (b) => this.describeTasks(b),
    };
  }

  private prune(): void {
    const before = Date.now() - (this.o.stoppedTaskRetentionMs ?? STOPPED_TASK_RETENTION_MS);
    for (const [arn, t] of this.tasks) {
      const { stoppedAt } = t.state();
      if (stoppedAt !== undefined && stoppedAt < before) {
        this.tasks.delete(arn);
        t.forget?.();
      }
    }
  }

  private listClusters(b: Body): unknown {
    const { items, nextToken } = page(
      [...this.clusters].sort().map((arn) => ({ key: arn, value: arn })),
      b,
    );
    return { clusterArns: items, ...(nextToken ? { nextToken } : {}) };
  }

  private listTasks(b: Body): unknown {
    this.prune();
    const clusterArn = this.clusterArn(b.cluster);
    if (!this.clusters.has(clusterArn))
      throw new AwsWireError('ClusterNotFoundException', 400, 'Cluster not found.');
    const desired = b.desiredStatus ?? 'RUNNING';
    if (!['RUNNING', 'PENDING', 'STOPPED'].includes(String(desired))) {
      throw invalid(`desiredStatus must be one of RUNNING, PENDING, STOPPED`);
    }
    const text = (key: string) =>
      typeof b[key] === 'string' && b[key] !== '' ? (b[key] as string) : undefined;
    const family = text('family');
    const startedBy = text('startedBy');
    const serviceName = text('serviceName')?.split('/').pop();
    const launchType = text('launchType');
    // ECS says startedBy "must be the only filter" when given; the emulator applies every filter
    // given together rather than guess the error it would answer.
    const matching = [...this.tasks.values()]
      .filter(
        (t) =>
          t.clusterArn === clusterArn &&
          // Nothing is ever desired PENDING: ECS answers that filter with no tasks.
          t.state().desiredStatus === desired &&
          (family === undefined || t.family === family) &&
          (startedBy === undefined || t.startedBy === startedBy) &&
          (serviceName === undefined || t.serviceName === serviceName) &&
          (launchType === undefined || launchType === 'FARGATE'),
      )
      // Oldest first, so a page's token stays right while tasks start and stop between pages.
      .map((t) => ({ key: `${String(t.createdAt).padStart(15, '0')}|${t.arn}`, value: t.arn }))
      .sort((x, y) => (x.key < y.key ? -1 : 1));
    const { items, nextToken } = page(matching, b);
    return { taskArns: items, ...(nextToken ? { nextToken } : {}) };
  }

  private describeTasks(b: Body): unknown {
    const refs = (b.tasks as unknown[] | undefined) ?? [];
    if (!Array.isArray(refs) || refs.length === 0) throw invalid('Tasks cannot be empty.');
    if (refs.length > MAX_DESCRIBE) throw invalid(`Tasks cannot contain more than ${MAX_DESCRIBE} elements.`);
    const tasks: unknown[] = [];
    const failures: unknown[] = [];
    for (const ref of refs) {
      const task = this.find(b.cluster, String(ref));
      if (task) tasks.push(task.describe());
      else failures.push({ arn: String(ref), reason: 'MISSING' });
    }
    return { tasks, failures };
  }
}

/**
 * One page of a list sorted by key: up to maxResults items after the key the token names. The
 * token is the last key returned (opaque to the caller, as ECS's is), so an item added or removed
 * between pages neither repeats nor skips the others.
 */
function page(all: { key: string; value: string }[], b: Body): { items: string[]; nextToken?: string } {
  const max = b.maxResults === undefined ? MAX_PAGE : Number(b.maxResults);
  if (!Number.isInteger(max) || max < 1 || max > MAX_PAGE) {
    throw invalid('maxResults must be between 1 and 100.');
  }
  let start = 0;
  if (b.nextToken !== undefined) {
    let after: unknown;
    try {
      after = JSON.parse(Buffer.from(String(b.nextToken), 'base64url').toString('utf8'))?.after;
    } catch {
      after = undefined;
    }
    if (typeof after !== 'string') throw invalid('Invalid nextToken.');
    start = all.findIndex((x) => x.key > after);
    if (start < 0) start = all.length;
  }
  const chosen = all.slice(start, start + max);
  const last = chosen.at(-1);
  const items = chosen.map((x) => x.value);
  return start + max < all.length && last !== undefined
    ? { items, nextToken: Buffer.from(JSON.stringify({ after: last.key })).toString('base64url') }
    : { items };
}
