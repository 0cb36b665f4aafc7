/**
 * The names a schedule's runs and timeline are read by: the run fields a `fields` filter may
 * choose, and the timeline's entry kinds. Apart from the request schemas (schedule-schemas.ts) so
 * that the CLI names them without loading zod.
 */

/** The fields of a schedule run (GET .../runs?fields=). */
export const RUN_FIELD_NAMES = [
  'run_id',
  'status',
  'duration_ms',
  'output',
  'error',
  'deduplicated',
  'schedule_id',
  'workspace_id',
  'agent',
  'agent_version',
  'trigger',
  'scheduled_time',
  'started_at',
  'finished_at',
] as const;

/**
 * A schedule's timeline kinds (GET .../events). The spec names version_updated; the other kinds are
 * ours (docs/schedules.md). One list for the stored entries and the `type` filter.
 */
export const SCHEDULE_EVENT_TYPES = [
  'created',
  'updated',
  'enabled',
  'disabled',
  'auto_disabled',
  'failure_alert',
  'alert_failed',
  'version_updated',
  'missed',
  'interrupted',
  'deleted',
] as const;
