import { setTimeout as delay } from 'node:timers/promises';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { ConditionFailedError, cond } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { findRun } from './call-run-reads.ts';
import { type CallRunRecord, callRunEntity, callRunKeys, ENDED_STATUSES } from './call-run-record.ts';

/*
 * Cancelling a run (POST /runs/{run_id}/cancel; docs/runs.md, "Cancelling a run"). The request
 * marks the run; the process running it sees the mark and stops it the way a call is stopped when
 * its caller goes away: its model request and sandbox command aborted, its sub-calls' requests
 * cut (they end as their caller gone), its orchestrator's credential revoked, its concurrency slot
 * released with its record. The run then ends `cancelled`, its call record saying what it used.
 * The process that runs a run is seldom the one that answers its cancel (on AWS, another Lambda
 * instance): it reads the run's record every CANCEL_POLL_MS. In one process the mark is seen at
 * once, through `watchers`.
 */

/** How often a running run reads its record for a cancel. */
export const CANCEL_POLL_MS = 1_000;

/** The abort reason of a call whose run was cancelled (calls/deadline.ts maps it). */
export { CANCELLED } from '../calls/deadline.ts';

/** The runs this process runs, each with what stops it: a cancel made here needs no poll to be seen. */
const watchers = new Map<string, () => void>();

/**
 * Marks the caller's run to be cancelled; the run as it is then. A run whose cancel was asked
 * before answers as it is (a second cancel is the first's answer); one that ended otherwise is 409.
 */
export async function requestCancel(
  deps: CoreDeps,
  auth: AuthContext,
  runId: string,
): Promise<CallRunRecord> {
  const run = await findRun(deps, auth, runId);
  // Asked before: answered as then, however the run ended (one that ended as the first cancel
  // landed ended as it ended, and a second cancel says the same).
  if (run.cancel_requested_at || run.status === 'cancelled') return run;
  if (ENDED_STATUSES.has(run.status)) throw endedConflict(run);
  const marked: CallRunRecord = { ...run, cancel_requested_at: deps.clock.now().toISOString() };
  try {
    await deps.store.put(callRunEntity.toItem(marked), { condition: cond.eq('status', 'running') });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    // It ended meanwhile: answered as it ended.
    const now = await findRun(deps, auth, runId);
    if (now.status === 'cancelled') return now;
    throw endedConflict(now);
  }
  watchers.get(runId)?.();
  return marked;
}

/** How long a cancel waits for its run to end before it answers that the cancel is under way. */
export const CANCEL_WAIT_MS = 5_000;

/**
 * Cancels the caller's run (requestCancel) and waits, up to CANCEL_WAIT_MS, for it to end; the run
 * as it is then, and whether it has ended.
 */
export async function cancelRun(
  deps: CoreDeps,
  auth: AuthContext,
  runId: string,
): Promise<{ run: CallRunRecord; ended: boolean }> {
  let run = await requestCancel(deps, auth, runId);
  const until = Date.now() + CANCEL_WAIT_MS;
  while (!ENDED_STATUSES.has(run.status) && Date.now() < until) {
    await delay(100);
    run = await findRun(deps, auth, runId);
  }
  return { run, ended: ENDED_STATUSES.has(run.status) };
}

function endedConflict(run: CallRunRecord): PlatformError {
  return new PlatformError('CONFLICT', `Run ${run.run_id} has already ended as ${run.status}`, {
    status: run.status,
  });
}

/**
 * Watches a running run for a cancel until the returned stop is called: `cancel` runs once, when
 * its record is marked (read every CANCEL_POLL_MS) or a cancel is made in this process.
 */
export function watchCancel(
  deps: CoreDeps,
  run: Pick<CallRunRecord, 'run_id' | 'account_id'>,
  cancel: () => void,
): () => void {
  let stopped = false;
  const fire = () => {
    if (stopped) return;
    stop();
    cancel();
  };
  watchers.set(run.run_id, fire);
  const key = { pk: callRunKeys.ofAccount(run.account_id), sk: callRunKeys.sk(run.run_id) };
  const poll = setInterval(() => {
    deps.store.get(key).then(
      (item) => {
        if (item?.cancel_requested_at) fire();
      },
      // A failed read is tried again at the next tick.
      () => undefined,
    );
  }, CANCEL_POLL_MS);
  poll.unref();
  function stop() {
    stopped = true;
    clearInterval(poll);
    watchers.delete(run.run_id);
  }
  return stop;
}
