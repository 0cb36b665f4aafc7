import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { scheduleEventItem } from './schedule-events.ts';
import { computeNext, mutateSchedule, type Schedule } from './schedule-record.ts';

/**
 * The spec's schedule.failure_streak payload (spec "Events"). A type, not an interface: a type's
 * object literal is a Record<string, unknown>, which the Notifier's payload is.
 */
export type FailureStreakAlert = {
  event: 'schedule.failure_streak';
  schedule_id: string;
  workspace_id: string;
  agent_name: string;
  consecutive_failures: number;
  threshold: number;
  auto_disabled: boolean;
  last_error: string;
  /** Present and true only on a test alert. */
  test?: true;
};

export function failureStreakAlert(
  s: Schedule,
  consecutiveFailures: number,
  threshold: number,
  autoDisabled: boolean,
  lastError: string,
): FailureStreakAlert {
  return {
    event: 'schedule.failure_streak',
    schedule_id: s.id,
    workspace_id: s.workspace_id,
    agent_name: s.agent,
    consecutive_failures: consecutiveFailures,
    threshold,
    auto_disabled: autoDisabled,
    last_error: lastError,
  };
}

const MAX_ATTEMPTS = 20;

/**
 * Applies a finished run to its schedule, per the spec's state table, as one conditional write on
 * the schedule's revision (retried on a race, so two runs finishing together both count):
 * total_runs +1, last run and status; a success resets consecutive_failures to 0; a failure adds
 * one, sends one alert when the count reaches alert_on_failure_count, and at
 * max_consecutive_failures disables the schedule (auto_disabled), logs it and alerts with
 * auto_disabled true. Timeline entries go in the same transaction; alerts are handed to the
 * notifier after it commits, so they are sent once and off the run's path.
 */
export async function applyRunOutcome(
  deps: CoreDeps,
  scheduleId: string,
  run: { status: 'success' | 'error' | 'timeout'; error: string | null; started_at: string },
  /** Written in the same transaction (the run's record), or alone when the schedule is gone. */
  withItems: Item[] = [],
): Promise<void> {
  const lastError = run.error ?? `run ended with status ${run.status}`;
  let outcome: Awaited<ReturnType<typeof mutateSchedule<{ failures: number; alerts: Alert[] }>>>;
  try {
    outcome = await mutateSchedule(
      deps,
      scheduleId,
      (stored) =>
        stored.deletedAt ? undefined : decideOutcome(deps, stored.schedule, run, lastError, withItems),
      MAX_ATTEMPTS,
    );
  } catch (err) {
    deps.logger.error('schedule outcome not applied', { schedule_id: scheduleId, error: String(err) });
    outcome = { status: 'skipped' };
  }
  if (outcome.status !== 'written') {
    if (outcome.status === 'contended') {
      deps.logger.error('schedule outcome not applied: too many concurrent updates', {
        schedule_id: scheduleId,
      });
    }
    if (withItems.length > 0) await deps.store.transactWrite(withItems.map((put) => ({ put })));
    return;
  }
  const s = outcome.stored.schedule;
  const next = outcome.next;
  const { failures, alerts } = outcome.result;
  if (next.auto_disabled && !s.auto_disabled) {
    deps.logger.warn('schedule auto-disabled', {
      schedule_id: s.id,
      workspace_id: s.workspace_id,
      consecutive_failures: failures,
    });
    await deps.scheduler.sync(next).catch((err) => {
      deps.logger.error('scheduler not updated after auto-disable', {
        schedule_id: s.id,
        error: String(err),
      });
    });
  }
  if (s.alert_webhook_url) {
    for (const a of alerts) {
      await deps.notifier
        .enqueue({
          url: s.alert_webhook_url,
          label: `schedule.failure_streak ${s.id}`,
          payload: failureStreakAlert(next, failures, a.threshold, a.autoDisabled, lastError),
        })
        .catch((err) => {
          deps.logger.error('failure alert not queued', { schedule_id: s.id, error: String(err) });
        });
    }
  }
}

type Alert = { threshold: number; autoDisabled: boolean };

/** The state table's step for one finished run: the new record, its timeline entries, the alerts due. */
function decideOutcome(
  deps: CoreDeps,
  s: Schedule,
  run: { status: 'success' | 'error' | 'timeout'; started_at: string },
  lastError: string,
  withItems: Item[],
): { next: Schedule; items: Item[]; result: { failures: number; alerts: Alert[] } } {
  const failed = run.status !== 'success';
  const failures = failed ? s.consecutive_failures + 1 : 0;
  const next: Schedule = {
    ...s,
    total_runs: s.total_runs + 1,
    consecutive_failures: failures,
    last_run_at: s.last_run_at && s.last_run_at > run.started_at ? s.last_run_at : run.started_at,
    last_status: run.status,
  };
  const events: Item[] = [];
  const alerts: Alert[] = [];
  if (failed && s.enabled) {
    if (failures === s.alert_on_failure_count && failures < s.max_consecutive_failures) {
      alerts.push({ threshold: s.alert_on_failure_count, autoDisabled: false });
    }
    if (failures >= s.max_consecutive_failures) {
      next.enabled = false;
      next.auto_disabled = true;
      next.next_run_at = null;
      alerts.push({ threshold: s.max_consecutive_failures, autoDisabled: true });
      events.push(
        scheduleEventItem(
          deps,
          s.id,
          'auto_disabled',
          `Disabled after ${failures} consecutive failures (max_consecutive_failures ${s.max_consecutive_failures})`,
          { consecutive_failures: failures, last_error: lastError },
        ),
      );
    }
  }
  if (next.enabled) {
    // The local loop owns next_run_at (it moves it past each slot it claims): recomputing it here
    // from now would skip a slot that came due during a long run. In AWS, EventBridge fires the
    // slots and next_run_at is for display: refresh it once it has passed.
    const now = deps.clock.now();
    const keep = s.next_run_at && (deps.scheduler.ownsNextRun || Date.parse(s.next_run_at) > now.getTime());
    next.next_run_at = keep ? s.next_run_at : computeNext(next, now);
  }
  for (const a of alerts) {
    events.push(
      scheduleEventItem(
        deps,
        s.id,
        'failure_alert',
        s.alert_webhook_url
          ? `Failure alert sent at ${failures} consecutive failures${a.autoDisabled ? ' (auto-disabled)' : ''}`
          : `Failure alert due at ${failures} consecutive failures, but no alert_webhook_url is set`,
        { consecutive_failures: failures, threshold: a.threshold, auto_disabled: a.autoDisabled },
      ),
    );
  }
  return { next, items: [...events, ...withItems], result: { failures, alerts } };
}
