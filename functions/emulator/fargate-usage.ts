import {
  DescribeTasksCommand,
  type ECSClient,
  ListClustersCommand,
  ListTasksCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import type { CapacityProviderName } from './ecs-task-ledger.ts';

/**
 * The Fargate usage of an account, read as an operator's script reads it with the AWS SDK
 * (ListClusters, ListTasks running and stopped, DescribeTasks), from the emulated ECS or from AWS
 * alike, and summed as Fargate bills it: for what the cost bench (`npm run bench:aws-cost`) and
 * tests price and count.
 *
 * Fargate bills a task's vCPU and memory "from the time you start to download your container image
 * until the Amazon ECS Task terminates, rounded up to the nearest second", with "a 1-minute minimum
 * charge" (AWS Fargate pricing, https://aws.amazon.com/fargate/pricing/). A task's bill so starts at
 * its `pullStartedAt` (its `startedAt` where no pull is reported) and ends at its `stoppedAt`, at
 * least a minute later; a task that never started pulling is not billed. A task still running is
 * counted to the window's end. Stopped tasks stay listed for an hour after they stop (ECS's
 * minimum, the emulator's choice: ecs-task-ledger.ts), so read within the hour.
 */

/** One capacity provider's usage over a window. */
export interface FargateProviderUsage {
  /** Tasks billed for some part of the window. */
  tasks: number;
  /** vCPUs times seconds billed within the window. */
  vcpuSeconds: number;
  /** GB (GiB, as Fargate prices memory) times seconds billed within the window. */
  gbSeconds: number;
}

export type FargateUsage = Record<CapacityProviderName, FargateProviderUsage>;

const MINIMUM_MS = 60_000;
const time = (d: Date | number | undefined) => (d === undefined ? undefined : new Date(d).getTime());

/** Every task of every cluster of the account that ECS still lists, running or stopped, described. */
export async function listFargateTasks(ecs: ECSClient): Promise<Task[]> {
  const clusters: string[] = [];
  let token: string | undefined;
  do {
    const out = await ecs.send(new ListClustersCommand({ ...(token ? { nextToken: token } : {}) }));
    clusters.push(...(out.clusterArns ?? []));
    token = out.nextToken;
  } while (token);
  const tasks: Task[] = [];
  for (const cluster of clusters) {
    const arns: string[] = [];
    for (const desiredStatus of ['RUNNING', 'STOPPED'] as const) {
      let next: string | undefined;
      do {
        const out = await ecs.send(
          new ListTasksCommand({ cluster, desiredStatus, ...(next ? { nextToken: next } : {}) }),
        );
        arns.push(...(out.taskArns ?? []));
        next = out.nextToken;
      } while (next);
    }
    // A task that stopped between the two lists is in both.
    const unique = [...new Set(arns)];
    for (let i = 0; i < unique.length; i += 100) {
      const out = await ecs.send(new DescribeTasksCommand({ cluster, tasks: unique.slice(i, i + 100) }));
      tasks.push(...(out.tasks ?? []));
    }
  }
  return tasks;
}

/**
 * The vCPU- and GB-seconds Fargate bills for these tasks within [from, to), by capacity provider
 * (a task without one is FARGATE's, as a `launchType: FARGATE` task is on-demand).
 */
export function fargateUsage(
  tasks: readonly Task[],
  window: { from: Date | number; to: Date | number },
): FargateUsage {
  const usage: FargateUsage = {
    FARGATE: { tasks: 0, vcpuSeconds: 0, gbSeconds: 0 },
    FARGATE_SPOT: { tasks: 0, vcpuSeconds: 0, gbSeconds: 0 },
  };
  const from = time(window.from) as number;
  const to = time(window.to) as number;
  for (const t of tasks) {
    const start = time(t.pullStartedAt) ?? time(t.startedAt);
    if (start === undefined) continue;
    const stopped = time(t.stoppedAt);
    // Billed by the second, rounded up, at least a minute from the pull's start.
    const billedEnd =
      stopped === undefined ? to : start + Math.max(MINIMUM_MS, Math.ceil((stopped - start) / 1000) * 1000);
    const ms = Math.min(billedEnd, to) - Math.max(start, from);
    if (ms <= 0) continue;
    const provider: CapacityProviderName =
      t.capacityProviderName === 'FARGATE_SPOT' ? 'FARGATE_SPOT' : 'FARGATE';
    const u = usage[provider];
    u.tasks++;
    u.vcpuSeconds += (Number(t.cpu) / 1024) * (ms / 1000);
    u.gbSeconds += (Number(t.memory) / 1024) * (ms / 1000);
  }
  return usage;
}
