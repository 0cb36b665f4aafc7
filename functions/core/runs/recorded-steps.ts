import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunRecorder, RunSteps, StepOptions } from '../../ports/run-steps.ts';
import { cond, queryAll } from '../../ports/store.ts';
import { openRunEntity, openRunKeys } from './open-run-record.ts';
import { runStepEntity, runStepKeys } from './run-step-record.ts';
import { decodeOutcome, encodeOutcome } from './step-outcomes.ts';

/**
 * The platform's own RunRecorder (ports/run-steps.ts), over the store: what the local platform
 * carries runs on with after a restart (edge/run-resume.ts). On AWS it holds what the request that
 * started a run recorded before handing it to the run worker; the worker's own steps are the
 * durable engine's (docs/decisions.md, "Long runs").
 *
 * `openEntries`: whether it keeps an entry for each run opened and not ended, which a restarted
 * local platform reads to find the runs to carry on. On AWS nothing reads them (the durable
 * engine knows its executions), so none is written: two writes a run less, on one partition.
 */
export function storeRunRecorder(
  deps: CoreDeps,
  { openEntries = true }: { openEntries?: boolean } = {},
): RunRecorder {
  return {
    steps: (runId, keepUntilMs, options) => recordedSteps(deps, runId, keepUntilMs, options),
    async opened(run) {
      if (openEntries) await deps.store.put(openRunEntity.toItem(run));
    },
    async ended(run) {
      if (openEntries) await deps.store.delete({ pk: openRunKeys.all(), sk: openRunKeys.sk(run.run_id) });
      // Its steps hold its input, its model's answers and its tools' results: once it has ended
      // nothing carries it on, so they go now, not with their expiry (large ones: the sweep's).
      const steps = await queryAll(deps.store, { pk: runStepKeys.ofRun(run.run_id) });
      await Promise.all(steps.map((item) => deps.store.delete({ pk: item.pk, sk: item.sk })));
    },
    async unended() {
      const items = await queryAll(deps.store, { pk: openRunKeys.all() });
      return items.map((item) => openRunEntity.fromItem(item));
    },
  };
}

export interface StepsOptions {
  /** A run that starts now: none to read back. */
  fresh?: boolean;
  /**
   * Where the steps the store does not hold are recorded instead: the durable engine's, for a run
   * the run worker carries on (functions/jobs/run-worker.ts). The store then holds only what the
   * request that started the run recorded before handing it over (its input, admission, charge
   * and credential), and the steps that vary from replay to replay (a credential issued anew).
   */
  beyond?: RunSteps;
}

/**
 * A run's steps over the store: those it finished read once, at the start of a (re)play, and each
 * new one written as it finishes. One process runs a run at a time (the one that started it, or
 * the one that carried it on), so a step is written once, with `notExists`: a second writer is a
 * fault, not a race to settle. A large outcome goes to the bundle store (step-outcomes.ts).
 */
export async function recordedSteps(
  deps: CoreDeps,
  runId: string,
  keepUntilMs: number,
  { fresh = false, beyond }: StepsOptions = {},
): Promise<RunSteps> {
  const items = fresh ? [] : await queryAll(deps.store, { pk: runStepKeys.ofRun(runId) });
  const finished = new Map<string, unknown>();
  await Promise.all(
    items.map(async (item) => {
      const step = runStepEntity.fromItem(item);
      const encoded = step.outcome !== null ? { json: step.outcome } : { ref: step.outcome_ref };
      finished.set(step.name, await decodeOutcome(deps, encoded));
    }),
  );
  return {
    async step<T>(name: string, fn: () => Promise<T>, options?: StepOptions): Promise<T> {
      if (finished.has(name)) return finished.get(name) as T;
      // A step that varies from replay to replay stays here: `beyond` may know steps by their order.
      if (beyond && !options?.varies) return beyond.step(name, fn);
      const { json, encoded } = await encodeOutcome(deps, { runId, name, keepUntilMs }, await fn());
      await deps.store.put(
        runStepEntity.toItem({
          run_id: runId,
          name,
          outcome: encoded.json ?? null,
          ...(encoded.ref ? { outcome_ref: encoded.ref } : {}),
          expires_ms: keepUntilMs,
        }),
        { condition: cond.notExists() },
      );
      const parsed = JSON.parse(json) as T;
      finished.set(name, parsed);
      return parsed;
    },
  };
}
