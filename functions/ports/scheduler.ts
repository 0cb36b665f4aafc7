/**
 * The Scheduler port: what makes cron schedules fire. Core code calls `sync` after every change
 * to a schedule's timetable (create, cron or time zone change, enable, disable, auto-disable) and
 * `remove` on delete. Locally the in-process loop reads the stored records itself, so `sync` only
 * wakes it; in AWS each record has one or two EventBridge Scheduler schedules.
 */
export interface ScheduleTimetable {
  id: string;
  type: 'cron' | 'webhook';
  cron_expression: string | null;
  timezone: string;
  enabled: boolean;
}

export interface Scheduler {
  readonly kind: 'local' | 'eventbridge';
  /**
   * True when the scheduler itself moves a record's next_run_at past each slot it claims (the
   * in-process loop); false when an outside service fires the slots (EventBridge), so next_run_at
   * is for display and core refreshes it.
   */
  readonly ownsNextRun: boolean;
  sync(schedule: ScheduleTimetable): Promise<void>;
  remove(scheduleId: string): Promise<void>;
}
