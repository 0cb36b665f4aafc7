import type { ECSClient } from '@aws-sdk/client-ecs';
import type { FargateReader } from './deployment-meter.ts';
import { fargateUsage, listFargateTasks } from './fargate-usage.ts';

/**
 * The meter's Fargate figures, asked of ECS as an operator's script asks (ListTasks and
 * DescribeTasks through the SDK): what each capacity provider billed in the window, and how many
 * tasks still run.
 */
export function fargateReader(ecs: ECSClient): FargateReader {
  return async (from, to) => {
    const tasks = await listFargateTasks(ecs);
    return {
      usage: fargateUsage(tasks, { from, to }),
      open: tasks.filter((t) => t.lastStatus !== 'STOPPED').length,
    };
  };
}
