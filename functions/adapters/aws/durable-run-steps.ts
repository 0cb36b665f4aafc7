import type { DurableContext } from '@aws/durable-execution-sdk-js';
import type { RunSteps } from '../../ports/run-steps.ts';

/**
 * The RunSteps port on AWS's durable engine: each step is the durable execution SDK's
 * `context.step`, checkpointed by Lambda; a replay of the run worker after a failed or timed-out
 * invocation answers it from its checkpoint instead of running it (docs/runs.md, "Long runs").
 *
 * - The SDK knows steps by the order they are asked for, and ends the execution on a replay that
 *   asks for another step at the same place: steps that vary from replay to replay never reach
 *   it (ports/run-steps.ts, `varies`; core/runs/recorded-steps.ts keeps them).
 * - Not retried by the engine: a step that throws is the run's error, as on the local platform
 *   (the platform's own retries, a model provider's or the store's, are inside the step). The SDK
 *   records the failure and rethrows it as its own StepError, which keeps only a message: the
 *   error the step threw is rethrown instead, so the run fails as it would on `npm start` (its
 *   code, its status, a sandbox's stderr). A replay that meets a recorded failure gets the SDK's.
 * - A checkpoint holds at most 256 KB: the run worker records large outcomes apart
 *   (core/runs/step-outcomes.ts).
 */
export function durableRunSteps(context: DurableContext): RunSteps {
  return {
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      let thrown: { error: unknown } | undefined;
      try {
        return await context.step(
          name,
          async () => {
            try {
              return await fn();
            } catch (error) {
              thrown = { error };
              throw error;
            }
          },
          { retryStrategy: () => ({ shouldRetry: false }) },
        );
      } catch (error) {
        throw thrown ? thrown.error : error;
      }
    },
  };
}
