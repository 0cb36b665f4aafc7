import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../shared/logger.ts';
import type { DurableExecution, DurableExecutions, WireError } from './durable-executions.ts';

/*
 * The invocations of a durable execution (durable-executions.ts), as Lambda makes them: the
 * function is invoked with the execution's state, and invoked again until its answer says the
 * execution ended. An answer of PENDING (a wait, a step's next attempt) is invoked again when the
 * earliest of those is due; an invocation that failed (a function error, a timeout, its process
 * gone) is invoked again after a pause, and replays what the execution had checkpointed: the
 * failure of an invocation is not the failure of its execution. An execution fails after
 * MAX_FAILED_IN_A_ROW invocations failed with no checkpoint between them (a function that cannot
 * get anywhere), and times out at its function's ExecutionTimeout, whatever it was doing.
 */

/** Invocations that may fail in a row, with no checkpoint between them, before the execution fails. */
export const MAX_FAILED_IN_A_ROW = 3;

export interface DurableInvocationOptions {
  executions: DurableExecutions;
  /** Invokes the function (as a synchronous invocation, within its timeout): its handler's answer, or a rejection. */
  invoke: (functionName: string, payload: unknown) => Promise<unknown>;
  /** The pause before an invocation that follows a failed one. */
  retryDelayMs?: number;
  logger?: Logger | undefined;
}

export class DurableInvocations {
  private readonly options: DurableInvocationOptions;
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(options: DurableInvocationOptions) {
    this.options = options;
  }

  /** Runs the execution to its end in the background; `settled` waits for it. */
  begin(execution: DurableExecution): Promise<void> {
    const run = this.run(execution).finally(() => this.running.delete(execution.arn));
    this.running.set(execution.arn, run);
    return run;
  }

  /** Resolves when the execution has ended (at once if it is not running here). */
  ended(execution: DurableExecution): Promise<void> {
    return this.running.get(execution.arn) ?? Promise.resolve();
  }

  /** Stops invoking (an invocation in flight is let finish); resolves when none is running. */
  async close(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running.values()]);
  }

  private async run(execution: DurableExecution): Promise<void> {
    const { executions, invoke, logger } = this.options;
    let failed = 0;
    let updatedIds: string[] = [];
    while (!execution.ending && !this.stopped) {
      if (Date.now() >= execution.deadlineMs) {
        executions.end(execution, { status: 'TIMED_OUT' });
        break;
      }
      const tokenBefore = execution.token;
      let answer: { Status?: string; Result?: string; Error?: WireError } | undefined;
      try {
        answer = (await invoke(execution.functionName, executions.invocationInput(execution, updatedIds))) as
          | typeof answer
          | undefined;
      } catch (err) {
        // A checkpoint since the last failure is progress: the count starts again.
        failed = execution.token === tokenBefore ? failed + 1 : 1;
        logger?.warn('durable invocation failed', { execution: execution.arn, failed, error: String(err) });
        if (failed >= MAX_FAILED_IN_A_ROW) {
          executions.end(execution, {
            status: 'FAILED',
            error: { ErrorType: 'InvocationFailed', ErrorMessage: String(err) },
          });
          break;
        }
        updatedIds = [];
        await sleep(this.options.retryDelayMs ?? 1000);
        continue;
      }
      failed = 0;
      updatedIds = [];
      if (answer?.Status === 'SUCCEEDED') {
        executions.end(execution, {
          status: 'SUCCEEDED',
          result: answer.Result || execution.checkpointedResult,
        });
      } else if (answer?.Status === 'FAILED') {
        executions.end(execution, { status: 'FAILED', error: answer.Error });
      } else if (answer?.Status === 'PENDING') {
        updatedIds = await this.untilDue(execution);
      } else {
        executions.end(execution, {
          status: 'FAILED',
          error: { ErrorType: 'InvalidAnswer', ErrorMessage: 'The function did not answer a durable status' },
        });
      }
    }
  }

  /** Waits for the execution's next wait or retry to be due (or its deadline): the operations that came due. */
  private async untilDue(execution: DurableExecution): Promise<string[]> {
    const { executions } = this.options;
    for (;;) {
      const { nextMs, updatedIds } = executions.due(execution, Date.now());
      if (updatedIds.length > 0) return updatedIds;
      // Nothing scheduled (a callback the emulator does not model): looked at again in a second.
      const at = Math.min(nextMs ?? Date.now() + 1000, execution.deadlineMs);
      await sleep(Math.max(0, at - Date.now()));
      if (Date.now() >= execution.deadlineMs || this.stopped) return [];
    }
  }
}
