import type { Item } from '../../ports/store.ts';
import { sortSuffix } from '../sort-suffix.ts';
import { HISTORY_DAYS } from './schedule-events.ts';
import { scheduleKeys } from './schedule-record.ts';

/** The spec's Run object (schedule run, webhook response). */
export interface Run {
  run_id: string;
  status: 'success' | 'error' | 'timeout';
  duration_ms: number;
  output: Record<string, unknown> | null;
  error: string | null;
  deduplicated: boolean;
}

export type RunTrigger = 'cron' | 'webhook' | 'manual';

/** What is stored per run: the Run object plus where it came from. */
export interface RunRecord extends Run {
  schedule_id: string;
  workspace_id: string;
  agent: string;
  agent_version: string;
  trigger: RunTrigger;
  /** The cron slot this run is for; null for webhook and manual runs. */
  scheduled_time: string | null;
  started_at: string;
  finished_at: string;
}

export function runOf(record: RunRecord, deduplicated = false): Run {
  return {
    run_id: record.run_id,
    status: record.status,
    duration_ms: record.duration_ms,
    output: record.output,
    error: record.error,
    deduplicated,
  };
}

export function runItem(record: RunRecord): Item {
  return {
    pk: scheduleKeys.runs(record.schedule_id),
    sk: `RUN#${record.started_at}#${sortSuffix()}#${record.run_id}`,
    ...(record as unknown as Record<string, never>),
    ttl: Math.floor(Date.parse(record.started_at) / 1000) + HISTORY_DAYS * 86_400,
  };
}

export function runFromItem(item: Item): RunRecord {
  const { pk: _p, sk: _s, ttl: _t, ...rest } = item;
  return rest as unknown as RunRecord;
}
