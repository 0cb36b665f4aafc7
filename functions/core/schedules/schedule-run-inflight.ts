import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { scheduleEventItem } from './schedule-events.ts';
import { scheduleKeys } from './schedule-record.ts';
import { type RunRecord, type RunTrigger, runItem } from './schedule-run-record.ts';

/**
 * A run that was in flight when the platform died (SIGKILL, a crash, a Lambda cut off) would
 * otherwise leave no trace: its slot is claimed, so it is never run again, and no record says so.
 * Each run therefore writes a marker when it starts, removed in the same transaction as its record.
 * A marker still there after the run's deadline plus the reconcile grace belongs to a run that will
 * never finish: housekeeping (every minute locally, every five minutes in AWS; at local start-up
 * every marker, since no platform can be running it then) turns it into a run with status error, saying it was interrupted, and an `interrupted` event on
 * the schedule's timeline (docs/schedules.md).
 */
export interface InflightRun {
  scheduleId: string;
  workspaceId: string;
  agent: string;
  agentVersion: string;
  runId: string;
  trigger: RunTrigger;
  scheduledTime: string | null;
  startedAt: string;
  /** Epoch ms (platform clock) after which an unfinished run is taken as interrupted. */
  interruptedAfter: number;
}

export const INTERRUPTED_ERROR =
  'INTERNAL_ERROR: interrupted: the platform stopped while this run was in flight, and it did not finish';

const dueKey = (ms: number) => String(ms).padStart(15, '0');

export function inflightItem(run: InflightRun): Item {
  return {
    ...scheduleKeys.inflight(run.scheduleId, run.runId),
    schedule_id: run.scheduleId,
    workspace_id: run.workspaceId,
    agent: run.agent,
    agent_version: run.agentVersion,
    run_id: run.runId,
    trigger: run.trigger,
    scheduled_time: run.scheduledTime,
    started_at: run.startedAt,
    interrupted_after: run.interruptedAfter,
    gsi2pk: scheduleKeys.inflightDue,
    gsi2sk: `${dueKey(run.interruptedAfter)}#${run.runId}`,
  };
}

/**
 * Records every run whose marker is past due as interrupted, once: the marker's deletion is the
 * condition of the transaction that writes the run and the event, so two reconcilers (or a late
 * finish) cannot both record it. Listing is a Query on GSI2, never a Scan.
 *
 * `all`: every marker, due or not, for a caller that knows no platform is running any of them
 * (the local platform at start, holding its data dir's lock: the runs died with the last one).
 */
export async function reconcileInterruptedRuns(
  deps: CoreDeps,
  options: { all?: boolean } = {},
): Promise<{ interrupted: number }> {
  const now = deps.clock.now();
  const due = await queryAll(deps.store, {
    index: 'gsi2',
    pk: scheduleKeys.inflightDue,
    ...(options.all ? {} : { sk: { lt: `${dueKey(now.getTime())}#~` } }),
  });
  let interrupted = 0;
  for (const item of due) {
    const record: RunRecord = {
      run_id: String(item.run_id),
      status: 'error',
      duration_ms: 0,
      output: null,
      error: INTERRUPTED_ERROR,
      deduplicated: false,
      schedule_id: String(item.schedule_id),
      workspace_id: String(item.workspace_id),
      agent: String(item.agent),
      agent_version: String(item.agent_version),
      trigger: item.trigger as RunTrigger,
      scheduled_time: (item.scheduled_time as string | null) ?? null,
      started_at: String(item.started_at),
      finished_at: now.toISOString(),
    };
    const slot = record.scheduled_time ? ` (slot ${record.scheduled_time})` : '';
    try {
      await deps.store.transactWrite([
        {
          delete: scheduleKeys.inflight(record.schedule_id, record.run_id),
          condition: cond.exists(),
        },
        { put: runItem(record) },
        {
          put: scheduleEventItem(
            deps,
            record.schedule_id,
            'interrupted',
            `Run ${record.run_id}${slot}, started ${record.started_at}, was interrupted: the platform stopped while it was in flight`,
            { run_id: record.run_id, scheduled_time: record.scheduled_time, trigger: record.trigger },
          ),
        },
      ]);
      interrupted++;
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      // Recorded by another reconciler, or finished after all: nothing to add.
    }
  }
  if (interrupted > 0) deps.logger.warn('interrupted schedule runs recorded', { interrupted });
  return { interrupted };
}
