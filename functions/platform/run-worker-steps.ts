import type { DurableContext } from '@aws/durable-execution-sdk-js';
import { durableRunSteps } from '../adapters/aws/durable-run-steps.ts';
import { withLargeOutcomes } from '../core/runs/step-outcomes.ts';
import type { CoreDeps } from '../ports/core-deps.ts';
import type { RunSteps } from '../ports/run-steps.ts';

/**
 * The run worker's own steps (functions/jobs/run-worker.ts): Lambda's durable engine, each
 * outcome too large for a checkpoint kept in the bundle store (docs/runs.md, "Long runs").
 */
export function runWorkerSteps(
  deps: CoreDeps,
  context: DurableContext,
  runId: string,
  keepUntilMs: number,
): RunSteps {
  return withLargeOutcomes(deps, durableRunSteps(context), runId, keepUntilMs);
}
