import { callAgent } from '../core/calls/gateway.ts';
import { spreadRetries } from '../core/revision.ts';
import { callRunEntity, callRunKeys, ENDED_STATUSES, runExpiresAtMs } from '../core/runs/call-run-record.ts';
import { RunEventLog } from '../core/runs/run-event-log.ts';
import { replayedCall } from '../core/runs/run-replay.ts';
import type { CoreDeps } from '../ports/core-deps.ts';
import type { RecordedRun, RunSteps } from '../ports/run-steps.ts';
import { RUN_STEPS_KEPT_MS, runThrough } from './async-call.ts';

/*
 * Runs carried on (docs/runs.md, "Carried on"): a platform whose runs keep their steps
 * (CoreDeps.runRecorder) finds, when it starts, the runs a process before it opened and never
 * ended, and makes each one's call again from its steps: what that process finished is read back,
 * not done again (no second admission or charge, no second model request or tool command), and
 * the run goes on from the first step it had not finished, to its end, its events numbered on
 * after those already logged. One that cannot be made again is left as it was, to be read as
 * interrupted once past its deadline, as before.
 */

export interface ResumedRuns {
  /** Each run made again, with its call's request id (its charge is its own to settle). */
  resumed: { run_id: string; request_id: string }[];
  /** Each with why it was not made again. */
  left: { run_id: string; why: string }[];
}

/**
 * Carries on every run left open: resolves once each has started again (or was left), with the
 * runs' ends left to `onDelivered` (the host's work after an answer), like a run's first start.
 */
export async function resumeRuns(
  deps: CoreDeps,
  onDelivered?: (run: () => Promise<unknown>) => void,
): Promise<ResumedRuns> {
  const recorder = deps.runRecorder;
  const out: ResumedRuns = { resumed: [], left: [] };
  if (!recorder) return out;
  for (const open of await recorder.unended()) {
    const outcome = await resumeRun(deps, open, onDelivered).catch((err: unknown) => String(err));
    if (typeof outcome !== 'string') out.resumed.push(outcome);
    else {
      const why = outcome;
      out.left.push({ run_id: open.run_id, why });
      await recorder.ended(open).catch(() => undefined);
    }
  }
  if (out.resumed.length + out.left.length > 0)
    deps.logger.info('runs carried on', { resumed: out.resumed.length, left: out.left });
  return out;
}

/**
 * The run worker's part (functions/jobs/run-worker.ts): carries on the one run `open`, handed over
 * by the request that started it, to its end, with the steps that request recorded in the store
 * and the rest recorded `beyond` it (the durable engine's). Resolves once the run has ended, or
 * with why it was not carried on (it is then left to be read as interrupted, as above).
 */
export async function carryOnRun(
  deps: CoreDeps,
  open: RecordedRun,
  beyond: RunSteps,
): Promise<{ ended: true } | { left: string }> {
  let ended: Promise<unknown> | undefined;
  const onDelivered = (run: () => Promise<unknown>) => {
    ended = run();
  };
  let outcome: Awaited<ReturnType<typeof resumeRun>> | undefined;
  // What throws here is the store or a client failing before the run's engine starts (its steps
  // so far are the store's: none of the engine's is asked for before the run opens), so the start
  // is tried again, as the local platform's next start would.
  for (let attempt = 0; outcome === undefined; attempt++) {
    outcome = await resumeRun(deps, open, onDelivered, beyond).catch(async (err: unknown) => {
      if (attempt + 1 >= CARRY_ON_ATTEMPTS) return `not started: ${String(err)}`;
      deps.logger.warn('run not started yet; trying again', { run_id: open.run_id, error: String(err) });
      await spreadRetries(attempt + 3);
      return undefined;
    });
  }
  if (typeof outcome === 'string') {
    deps.logger.warn('run not carried on', { run_id: open.run_id, why: outcome });
    await deps.runRecorder?.ended(open).catch(() => undefined);
    return { left: outcome };
  }
  await ended;
  return { ended: true };
}

/** How many times the run worker tries to start a run it was handed before it leaves it. */
const CARRY_ON_ATTEMPTS = 5;

/** Starts the run again: the run once it has, else why not. */
async function resumeRun(
  deps: CoreDeps,
  open: RecordedRun,
  onDelivered: ((run: () => Promise<unknown>) => void) | undefined,
  beyond?: RunSteps,
): Promise<ResumedRuns['resumed'][number] | string> {
  const item = await deps.store.get({
    pk: callRunKeys.ofAccount(open.account_id),
    sk: callRunKeys.sk(open.run_id),
  });
  const record = item && callRunEntity.fromItem(item);
  if (!record) return 'no run';
  if (ENDED_STATUSES.has(record.status)) return 'ended';
  const recorder = deps.runRecorder;
  if (!recorder) return 'no recorder';
  const keepUntilMs = deps.clock.now().getTime() + RUN_STEPS_KEPT_MS;
  const steps = await recorder.steps(record.run_id, keepUntilMs, beyond ? { beyond } : {});
  const replay = await replayedCall(deps, record, steps);
  if (typeof replay === 'string') return replay;
  const { auth, request } = replay;
  const started = await runThrough(
    deps,
    { requestId: record.request_id, onDelivered },
    (stream, signal) => callAgent(deps, auth, { ...request, run: true, stream, signal, steps }),
    steps,
    {
      // The run is there: its record stays as its first process wrote it, its log goes on.
      open: async () => ({
        record,
        log: await RunEventLog.continued(deps, record.run_id, runExpiresAtMs(record)),
      }),
    },
  );
  return 'record' in started
    ? { run_id: record.run_id, request_id: record.request_id }
    : `answered ${JSON.stringify(started.result.body).slice(0, 200)}`;
}
