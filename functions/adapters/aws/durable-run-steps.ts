import type { DurableContext } from '@aws/durable-execution-sdk-js';
import type { RunSteps } from '../../ports/run-steps.ts';

/**
 * The RunSteps port on AWS's durable engine: each step is the durable execution SDK's
 * `context.step`, checkpointed by Lambda; a replay of the run worker after a failed or timed-out
 * invocation answers it from its checkpoint instead of running it (docs/runs.md, "Long runs").
 * Not retried by the engine: a step that throws is the run's error, as on the local platform (the
 * platform's own retries, a model provider's or the store's, are inside the step). A checkpoint
 * holds at most 256 KB: the run worker records large outcomes apart (core/runs/step-outcomes.ts).
 */
export function durableRunSteps(context: DurableContext): RunSteps {
  return {
    step: (name, fn) => context.step(name, fn, { retryStrategy: () => ({ shouldRetry: false }) }),
  };
}
