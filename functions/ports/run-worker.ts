import type { RecordedRun } from './run-steps.ts';

/**
 * The RunWorker port: where a run, once written, admitted and charged, is handed to be run to its
 * end by something other than the request that started it (docs/runs.md, "Long runs"). On AWS it
 * is the run-worker Lambda durable function, which outlives the calls function's 15 minutes and
 * carries the run on after a failed or replaced invocation from its checkpointed steps. Absent
 * (the local platform, or a stack without the worker): the run goes on in the process that
 * started it.
 */
export interface RunWorker {
  /**
   * Hands `run` over: resolves once the engine has taken it (a second start of the same run starts
   * nothing: the engine knows it by its id); rejects if it could not be handed over, and the
   * caller then runs it itself.
   */
  start(run: RecordedRun): Promise<void>;
}

/** What the run worker is started with: the run it carries on. */
export interface RunWorkerEvent {
  run_id: string;
  account_id: string;
  deadline_at: string;
}
