import type { CoreDeps } from '../../ports/core-deps.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { CallContext, EngineOutcome, EngineRun } from './call-context.ts';
import { runCodeRuntime } from './code-runtime.ts';
import { CALLER_GONE, CANCELLED, raceEnd } from './deadline.ts';
import { runDirectLlm } from './direct-llm.ts';
import { runManagedLoop } from './managed-loop.ts';

/*
 * A call's engine, once the call is admitted and charged (gateway.ts): the agent's execution
 * engine run within the call's deadline, stopped when its caller goes or cancels its run, and, for
 * a run, recorded as its steps (a managed loop's model requests and tool calls; another engine's
 * whole run as one step: ports/run-steps.ts).
 */

/** Runs the agent's engine, aborted, and answered with 504 TIMEOUT, when the deadline passes. */
export async function runWithinDeadline(
  deps: CoreDeps,
  call: CallContext,
  run: Omit<EngineRun, 'signal'>,
): Promise<EngineOutcome> {
  const controller = new AbortController();
  // Each end of the call aborts the engine's signal and ends the race with its reason (raceEnd).
  let endRace: (reason: unknown) => void = () => {};
  const abort = (reason?: unknown) => {
    controller.abort(reason);
    endRace(controller.signal.reason);
  };
  // Unref'd: a deadline alone does not keep a process alive (a platform stopped inside a process
  // that goes on, a test's, left a cut-off call's timer holding it for the deadline's 300 s).
  const timer = setTimeout(() => abort(), call.deadline.remainingMs());
  timer.unref();
  // A caller gone ends the call as its deadline would, recorded as such (docs/calls.md).
  const gone = call.request.signal;
  // Its run cancelled, or its caller gone: either ends it now (a cancel says so in its record).
  const hangUp = () => abort(gone?.reason === CANCELLED ? CANCELLED : CALLER_GONE);
  gone?.addEventListener('abort', hangUp, { once: true });
  if (gone?.aborted) hangUp();
  let finished = false;
  try {
    const race = raceEnd(runEngine(deps, call, { ...run, signal: controller.signal }));
    endRace = race.end;
    if (controller.signal.aborted) race.end(controller.signal.reason);
    const outcome = await race.result;
    finished = true;
    return outcome;
  } finally {
    clearTimeout(timer);
    gone?.removeEventListener('abort', hangUp);
    // After a failure, whatever the engine still has in flight (a sub-call, a model request) is
    // cancelled. After success nothing is left to cancel, and an abort is not free (its event and
    // DOMException cost about 100 µs, a tenth of a call's target), so none is made.
    if (!finished) abort();
  }
}

async function runEngine(deps: CoreDeps, call: CallContext, run: EngineRun): Promise<EngineOutcome> {
  const engine = call.agent.manifest.execution_engine;
  // A managed loop's model requests and tool calls are its steps; another engine's whole run is one:
  // a replay answers its outcome, with no second model request or command.
  if (engine === 'managed_loop') return runManagedLoop(deps, call, run);
  return run.steps
    ? run.steps.step('engine', () => runOneShot(deps, call, run))
    : runOneShot(deps, call, run);
}

/** An engine whose run is one model request or one command. */
async function runOneShot(deps: CoreDeps, call: CallContext, run: EngineRun): Promise<EngineOutcome> {
  const engine = call.agent.manifest.execution_engine;
  if (engine === 'direct_llm') {
    const r = await runDirectLlm(deps, call, run);
    return { ...r, computeMs: 0, logs: [] };
  }
  if (engine === 'code_runtime') {
    const r = await runCodeRuntime(deps, call, run);
    return {
      ...r,
      provider: null,
      model: null,
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
  }
  throw new PlatformError(
    'UNPROCESSABLE',
    `${call.agent.org}/${call.agent.name} runs on the ${engine} engine, which this platform build does not run yet`,
  );
}
