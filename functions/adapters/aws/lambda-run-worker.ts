import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { RecordedRun } from '../../ports/run-steps.ts';
import type { RunWorker, RunWorkerEvent } from '../../ports/run-worker.ts';

/**
 * The RunWorker port on AWS: an asynchronous invoke of the run-worker durable function by its
 * alias, named by the run's id (`DurableExecutionName`), so that Lambda starts one durable
 * execution per run: a second start of the same run (a retried hand-over) finds the one started
 * and starts nothing. Lambda then invokes it until the run ends, again after a failed or timed-out
 * invocation, each time replaying the steps it checkpointed (functions/jobs/run-worker.ts).
 */
export class LambdaRunWorker implements RunWorker {
  private readonly client: LambdaClient;
  private readonly functionName: string;

  constructor(options: { client: LambdaClient; functionName: string }) {
    this.client = options.client;
    this.functionName = options.functionName;
  }

  async start(run: RecordedRun): Promise<void> {
    const event: RunWorkerEvent = {
      run_id: run.run_id,
      account_id: run.account_id,
      deadline_at: run.deadline_at,
    };
    await this.client.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: 'Event',
        DurableExecutionName: run.run_id,
        Payload: Buffer.from(JSON.stringify(event)),
      }),
    );
  }
}
