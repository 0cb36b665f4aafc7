import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxUnavailableError, type SessionSpec } from '../../ports/sandbox.ts';
import type { SessionContext } from './ecs-sandbox-options.ts';
import { runSandboxTask } from './ecs-sandbox-task.ts';
import { CAPACITY_WAIT_MARGIN_MS, capacityError, timeToStartTask } from './ecs-sandbox-warm.ts';
import type { FargateSize } from './fargate-size.ts';

/**
 * A run's own task (no warm runners; the session in ecs-sandbox-session.ts): past the account's
 * quota or Fargate's capacity it tries again every capacityPollMs (each try its own idempotency
 * token) until the deadline leaves no time to run, then a SandboxCapacityError (503, Retry-After).
 * `onTask` hears of every task ECS started, also one it then refused, so the session stops it.
 */
export async function startOwnTask(
  ctx: SessionContext,
  spec: SessionSpec,
  /** The S3 ARN of the run's env file, which holds its manifest's URL (ecs-sandbox-env-file.ts). */
  envFile: string,
  size: FargateSize,
  onTask: (taskArn: string) => void,
): Promise<void> {
  const failStart = (why: string): never => {
    throw new SandboxUnavailableError(`ECS could not start the sandbox task for run ${spec.runId}: ${why}`);
  };
  for (let attempt = 1; ; attempt++) {
    if (!timeToStartTask(ctx, spec.deadlineMs)) throw capacityError('start', undefined, ctx.taskStartMs);
    const token = attempt === 1 ? spec.runId : `${spec.runId.slice(0, 56)}-try${attempt}`;
    const { taskArn, refused } = await runSandboxTask(ctx, spec, envFile, size, token);
    if (taskArn) onTask(taskArn);
    if (!refused) return;
    if (taskArn || refused.kind === 'other') return failStart(refused.why);
    if (spec.deadlineMs - Date.now() < ctx.capacityPollMs + CAPACITY_WAIT_MARGIN_MS) {
      throw capacityError(refused.kind);
    }
    await sleep(ctx.capacityPollMs);
  }
}
