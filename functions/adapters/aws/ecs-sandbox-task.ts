/**
 * The Fargate task of an ECS sandbox session (functions/adapters/aws/ecs-sandbox.ts): its RunTask
 * (the one override is the run manifest's URL), the DescribeTasks and StopTask the session's
 * polling and close send, and what a task that stopped without a result means for the exec.
 */
import {
  DescribeTasksCommand,
  RunTaskCommand,
  type RunTaskCommandInput,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { SANDBOX_MANIFEST_ENV } from '../../containers/sandbox-protocol.ts';
import { type ExecResult, SandboxUnavailableError, type SessionSpec } from '../../ports/sandbox.ts';
import type { SessionContext } from './ecs-sandbox-options.ts';

/** The container of the task definition that runs RUNNER_BOOTSTRAP. */
export const SANDBOX_CONTAINER_NAME = 'runner';

/**
 * RunTask of the sandbox task definition, in the sandbox's subnets with no public IP: its one
 * override is the manifest's URL (a run's, or a warm runner's pool manifest).
 */
export function sandboxTaskInput(
  ctx: SessionContext,
  task: {
    clientToken: string;
    startedBy: string;
    manifestUrl: string;
    tags: { key: string; value: string }[];
  },
): RunTaskCommandInput {
  return {
    cluster: ctx.cluster,
    taskDefinition: ctx.taskDefinition,
    launchType: 'FARGATE',
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
          environment: [{ name: SANDBOX_MANIFEST_ENV, value: task.manifestUrl }],
        },
      ],
    },
    tags: task.tags,
  };
}

/**
 * Starts the run's task. Returns its ARN, and the error when ECS reported failures or no task (the
 * ARN is then that of a task it may have started anyway, for the session to stop at close).
 */
export async function runSandboxTask(
  ctx: SessionContext,
  spec: SessionSpec,
  manifestUrl: string,
): Promise<{ taskArn: string | undefined; error?: SandboxUnavailableError }> {
  const input = sandboxTaskInput(ctx, {
    clientToken: spec.runId,
    startedBy: spec.runId,
    manifestUrl,
    tags: [
      { key: 'agenthost:run-id', value: spec.runId },
      { key: 'agenthost:workspace-id', value: spec.workspaceId },
    ],
  });
  const out = await ctx.ecs.send(new RunTaskCommand(input));
  const taskArn = out.tasks?.[0]?.taskArn;
  if (!taskArn || (out.failures?.length ?? 0) > 0) {
    const why =
      (out.failures ?? [])
        .map((f) => [f.reason, f.detail].filter(Boolean).join(': '))
        .filter(Boolean)
        .join('; ') || 'no task and no failure reported';
    return {
      taskArn,
      error: new SandboxUnavailableError(
        `ECS could not start the sandbox task for run ${spec.runId}: ${why}`,
      ),
    };
  }
  return { taskArn };
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
