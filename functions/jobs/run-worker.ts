import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { storeRunRecorder } from '../core/runs/recorded-steps.ts';
import { RUN_STEPS_KEPT_MS } from '../edge/async-call.ts';
import { carryOnRun } from '../edge/run-resume.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';
import { runWorkerSteps } from '../platform/run-worker-steps.ts';
import type { RunWorkerEvent } from '../ports/run-worker.ts';

let deps: Promise<Deps> | undefined;

/**
 * The run worker (docs/runs.md, "Long runs"): a Lambda durable function that runs a run to its
 * end once the request that started it handed it over (adapters/aws/lambda-run-worker.ts, one
 * durable execution per run, named by its id). Its steps are checkpointed by Lambda
 * (platform/run-worker-steps.ts); when an invocation fails or reaches the function's timeout
 * (15 minutes at most), Lambda invokes it again and the run is made again from its start, each
 * finished step answered from its checkpoint (a model request is not sent again, a sandbox command
 * not run again), up to the run's deadline within the execution's timeout. What the starting
 * request recorded (its input, admission, charge, credential) is read from the store.
 */
export const handler = withDurableExecution(async (event: RunWorkerEvent, context: DurableContext) => {
  deps ??= createDeps(processConfig());
  const d = await deps;
  // The store's recorder: what the starting request recorded (no open entries on AWS: deps.ts).
  d.runRecorder ??= storeRunRecorder(d, { openEntries: false });
  if (typeof event?.run_id !== 'string' || typeof event.account_id !== 'string') {
    d.logger.error('run worker event malformed; dropped', { event: JSON.stringify(event).slice(0, 200) });
    return { left: 'malformed' };
  }
  const keepUntilMs = d.clock.now().getTime() + RUN_STEPS_KEPT_MS;
  try {
    return await carryOnRun(d, event, runWorkerSteps(d, context, event.run_id, keepUntilMs));
  } finally {
    // A frozen function exports nothing: the run's spans go before the invocation ends.
    await d.tracer.flush();
  }
});
