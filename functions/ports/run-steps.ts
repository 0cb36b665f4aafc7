/**
 * The RunSteps port: a run's steps, each run once. A run that is carried on by another process
 * (a Lambda durable function replayed after its invocation failed or timed out; `npm start`
 * restarted) runs its code again from the start, and each step it had finished answers its
 * recorded outcome instead of running again: a model request is not sent twice, a sandbox command
 * is not run twice (docs/runs.md, "Long runs"). The engine behind it is AWS's own on AWS (the
 * durable execution SDK's `context.step`) and the store locally (core/runs/recorded-steps.ts).
 *
 * A step's outcome must survive JSON: what it answers on a replay is its outcome parsed back. A
 * step that throws is the run's error where it throws. The store records nothing for it, so a
 * replay runs it again; AWS's engine records its failure, and a replay meets it again, its error
 * then a plain one (docs/runs.md, "Long runs").
 *
 * An engine may know a run's steps by the order in which they are asked for (a durable function
 * numbers them): every replay must ask for the same steps in the same order, but for those marked
 * `varies`.
 */
export interface RunSteps {
  /**
   * Runs `fn` as the step `name` (unique within the run, the same on every replay), or answers
   * the outcome recorded for it.
   */
  step<T>(name: string, fn: () => Promise<T>, options?: StepOptions): Promise<T>;
}

export interface StepOptions {
  /**
   * The step is not asked for the same on every replay (a run credential, issued anew by each
   * replay: core/calls/service-keys.ts), so it is kept apart from the steps an engine knows by
   * their order: in the store, on AWS too (core/runs/recorded-steps.ts).
   */
  varies?: boolean;
}

/** Steps that record nothing: a call that waits for its answer runs each step once anyway. */
export const UNRECORDED_STEPS: RunSteps = { step: (_name, fn) => fn() };

/** A run as its recorder knows it. */
export interface RecordedRun {
  run_id: string;
  account_id: string;
  /** ISO: when the run is stopped as timed out. */
  deadline_at: string;
}

/**
 * Where runs started without waiting keep their steps, so that a process other than the one that
 * started a run can carry it on. Absent from CoreDeps: a run's steps are recorded nowhere, and a
 * run whose process goes away is interrupted (docs/runs.md).
 */
export interface RunRecorder {
  /**
   * The steps of the run `runId`, those it finished read back (none to read for a run that starts
   * now: `fresh`); kept until `keepUntilMs` at least. With `beyond`, the steps not recorded here
   * are recorded there (the durable engine's), and none is written here.
   */
  steps(
    runId: string,
    keepUntilMs: number,
    options?: { fresh?: boolean; beyond?: RunSteps },
  ): Promise<RunSteps>;
  /** The run is written and running: it is one to carry on if its process goes away. */
  opened(run: RecordedRun): Promise<void>;
  /** The run ended: none to carry on. */
  ended(run: RecordedRun): Promise<void>;
  /** The runs opened and not ended (a restarted process carries them on). */
  unended(): Promise<RecordedRun[]>;
}
