/**
 * The Fargate task of an ECS sandbox session (functions/adapters/aws/ecs-sandbox.ts): its RunTask
 * (the one override is the S3 object of the env file that holds the run manifest's URL:
 * ecs-sandbox-env-file.ts), the DescribeTasks and StopTask the session's
 * polling and close send, and what a task that stopped without a result means for the exec.
 */
import {
  DescribeTasksCommand,
  RunTaskCommand,
  type RunTaskCommandInput,
  type RunTaskCommandOutput,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { type ExecResult, SandboxUnavailableError, type SessionSpec } from '../../ports/sandbox.ts';
import type { SessionContext } from './ecs-sandbox-options.ts';
import { DEFAULT_RUNNER_SIZE, type FargateSize } from './fargate-size.ts';

/** The container of the task definition that runs RUNNER_BOOTSTRAP. */
export const SANDBOX_CONTAINER_NAME = 'runner';

/**
 * RunTask of the sandbox task definition, in the sandbox's subnets with no public IP: its overrides
 * are the env file (its S3 ARN) holding the manifest's URL (a run's, or a warm runner's pool
 * manifest), never the URL itself (ecs-sandbox-env-file.ts) and, when it is not the task
 * definition's own (DEFAULT_RUNNER_SIZE), the task's size. On Fargate Spot (`spot`) through the
 * cluster's FARGATE_SPOT capacity provider, else on-demand Fargate.
 */
export function sandboxTaskInput(
  ctx: SessionContext,
  task: {
    clientToken: string;
    startedBy: string;
    /** The S3 ARN of the task's env file (writeTaskEnvFile). */
    envFile: string;
    tags: { key: string; value: string }[];
    size?: FargateSize | undefined;
    spot?: boolean;
  },
): RunTaskCommandInput {
  const size = task.size ?? DEFAULT_RUNNER_SIZE;
  const ownSize = size.cpu !== DEFAULT_RUNNER_SIZE.cpu || size.memory !== DEFAULT_RUNNER_SIZE.memory;
  return {
    cluster: ctx.cluster,
    taskDefinition: ctx.taskDefinition,
    // A capacity provider strategy and a launch type are exclusive (RunTask refuses both).
    ...(task.spot
      ? { capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }] }
      : { launchType: 'FARGATE' as const }),
    count: 1,
    clientToken: task.clientToken,
    startedBy: task.startedBy,
    networkConfiguration: {
      awsvpcConfiguration: {
        subnets: [...ctx.subnets],
        securityGroups: [...ctx.securityGroups],
        assignPublicIp: 'DISABLED',
      },
    },
    overrides: {
      containerOverrides: [
        {
          name: SANDBOX_CONTAINER_NAME,
          environmentFiles: [{ type: 's3', value: task.envFile }],
        },
      ],
      ...(ownSize ? { cpu: String(size.cpu), memory: String(size.memory) } : {}),
    },
    tags: task.tags,
  };
}

/**
 * Why RunTask started no task, as the platform answers it: `quota` (the account's Fargate vCPU
 * quota, or Spot's, is reached) and `capacity` (Fargate has none now) pass with time, so the run
 * waits and then answers 503 with Retry-After; anything else is the deployment's fault.
 */
export interface TaskRefusal {
  kind: 'quota' | 'capacity' | 'other';
  /** ECS's own words (reasons and details, or the error's message): no secret is in them. */
  why: string;
}

const QUOTA_REFUSAL = /limit on the number of|LimitExceeded|quota/i;
const CAPACITY_REFUSAL = /capacity is unavailable|insufficient capacity|no capacity/i;

function refusal(why: string): TaskRefusal {
  const kind = QUOTA_REFUSAL.test(why) ? 'quota' : CAPACITY_REFUSAL.test(why) ? 'capacity' : 'other';
  return { kind, why };
}

/**
 * RunTask: the task's ARN, or why ECS started none. ECS refuses a task past a quota either in
 * `failures` or as an error (LimitExceededException and the like): both are a refusal here; a
 * network or permission error is thrown as it came.
 */
export async function startSandboxTask(
  ctx: SessionContext,
  input: RunTaskCommandInput,
): Promise<
  { taskArn: string; refused?: undefined } | { taskArn?: string | undefined; refused: TaskRefusal }
> {
  let out: RunTaskCommandOutput;
  try {
    out = await ctx.ecs.send(new RunTaskCommand(input));
  } catch (err) {
    const e = err as Error;
    const why = `${e.name}: ${e.message}`;
    const r = refusal(why);
    if (r.kind === 'other') throw err;
    return { refused: r };
  }
  const taskArn = out.tasks?.[0]?.taskArn;
  if (!taskArn || (out.failures?.length ?? 0) > 0) {
    const why =
      (out.failures ?? [])
        .map((f) => [f.reason, f.detail].filter(Boolean).join(': '))
        .filter(Boolean)
        .join('; ') || 'no task and no failure reported';
    return { taskArn, refused: refusal(why) };
  }
  return { taskArn };
}

/**
 * Starts the run's task (no warm runners). Returns its ARN, and the refusal when ECS reported
 * failures or no task (the ARN is then that of a task it may have started anyway, for the session
 * to stop at close).
 */
export async function runSandboxTask(
  ctx: SessionContext,
  spec: SessionSpec,
  /** The S3 ARN of the run's env file (writeTaskEnvFile). */
  envFile: string,
  size?: FargateSize,
  /** RunTask's idempotency token: the run id, or one of its own for each new try after a refusal. */
  clientToken = spec.runId,
): Promise<{ taskArn?: string | undefined; refused?: TaskRefusal | undefined }> {
  const input = sandboxTaskInput(ctx, {
    clientToken,
    startedBy: spec.runId,
    envFile,
    size,
    tags: [
      { key: 'agenthost:run-id', value: spec.runId },
      { key: 'agenthost:workspace-id', value: spec.workspaceId },
    ],
  });
  return startSandboxTask(ctx, input);
}

/** The task as ECS describes it now. */
export async function describeSandboxTask(ctx: SessionContext, taskArn: string): Promise<Task | undefined> {
  const out = await ctx.ecs.send(new DescribeTasksCommand({ cluster: ctx.cluster, tasks: [taskArn] }));
  return out.tasks?.find((t) => t.taskArn === taskArn) ?? out.tasks?.[0];
}

/** Stops the task, for `reason`. */
export async function stopSandboxTask(ctx: SessionContext, taskArn: string, reason: string): Promise<void> {
  await ctx.ecs.send(new StopTaskCommand({ cluster: ctx.cluster, task: taskArn, reason }));
}

/**
 * A warm runner's task that ended by itself with status 0 before its run's first result: the
 * runner exits 0 with a run unanswered only when no claim came in its wait ("idle: no claim
 * came", warm-runner.ts), since a claim it read is answered (a result, or an error result for a
 * refused pair) and a runner failure exits 70. So nothing of that run ran in it.
 */
export function exitedIdle(task: Task): boolean {
  const container = task.containers?.find((c) => c.name === SANDBOX_CONTAINER_NAME) ?? task.containers?.[0];
  return container?.exitCode === 0;
}

/**
 * The task stopped without a result. The command runs as another user than the runner and cannot
 * stop it, so this is the task failing to start (image pull, capacity, networking), or the
 * container killed as a whole (out of memory): the latter is the run's failure, the rest is ours.
 */
export function stoppedTaskResult(task: Task, elapsed: number, runId: string): ExecResult {
  const container = task.containers?.find((c) => c.name === SANDBOX_CONTAINER_NAME) ?? task.containers?.[0];
  const reason = [task.stopCode, task.stoppedReason, container?.reason].filter(Boolean).join(': ');
  if (container?.exitCode === 137 || /OutOfMemory/i.test(container?.reason ?? '')) {
    return {
      exitCode: null,
      signal: 'SIGKILL',
      stdout: '',
      stderrTail: `the sandbox task was killed (${reason || 'exit status 137'})`,
      timedOut: false,
      stdoutTruncated: false,
      durationMs: elapsed,
    };
  }
  throw new SandboxUnavailableError(
    `the sandbox task of run ${runId} stopped without a result (${reason || 'no reason given'}${
      container?.exitCode !== undefined ? `; exit status ${container.exitCode}` : ''
    })`,
  );
}
