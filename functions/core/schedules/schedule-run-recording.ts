import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, TransactionCanceledError } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { scheduleKeys } from './schedule-record.ts';
import { withStoredOutput } from './schedule-run-output.ts';
import { type RunRecord, runItem } from './schedule-run-record.ts';

/** What a run's record says when the record with its output could not be written. */
export const UNRECORDED_OUTPUT_ERROR =
  'INTERNAL_ERROR: the run finished, but its output could not be stored; it is lost';

/**
 * Writes a finished run's record in place of its in-flight marker (schedule-run-inflight.ts): one
 * cannot change without the other. A large output goes to the bundle store first
 * (schedule-run-output.ts). When the record with its output cannot be written, the run is recorded
 * as an error saying so, still replacing the marker (conditioned on it, so a first write that did
 * land after all is never doubled): the caller is told what the history says, and the run is not
 * called interrupted later. Only when that fails too does this throw (the caller answers 500), and
 * the marker left behind is recorded as interrupted: the platform did fail. Were the failure only
 * logged, the caller would have a success the history never showed, and housekeeping would later
 * call the run interrupted.
 *
 * Returns the record as stored (its output possibly behind `output_ref`).
 */
export async function recordFinishedRun(
  deps: CoreDeps,
  record: RunRecord,
  hasMarker: boolean,
): Promise<RunRecord> {
  const marker = scheduleKeys.inflight(record.schedule_id, record.run_id);
  const fields = { schedule_id: record.schedule_id, run_id: record.run_id };
  let stored: RunRecord | undefined;
  try {
    stored = await withStoredOutput(deps, record);
    await deps.store.transactWrite([{ put: runItem(stored) }, ...(hasMarker ? [{ delete: marker }] : [])]);
    return stored;
  } catch (err) {
    deps.logger.error('schedule run record not written', { ...fields, error: String(err) });
  }
  const failed: RunRecord = { ...record, status: 'error', output: null, error: UNRECORDED_OUTPUT_ERROR };
  try {
    await deps.store.transactWrite([
      { put: runItem(failed) },
      ...(hasMarker ? [{ delete: marker, condition: cond.exists() }] : []),
    ]);
    return failed;
  } catch (err) {
    // The marker is gone: the first write landed although it reported a failure.
    if (err instanceof TransactionCanceledError && hasMarker) return stored ?? failed;
    deps.logger.error('schedule run not recorded', { ...fields, error: String(err) });
    throw new PlatformError('INTERNAL_ERROR', 'The run finished, but the platform could not record it');
  }
}
