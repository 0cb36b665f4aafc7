import * as z from 'zod';
import type { Item } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import type { OutcomeCodec } from '../idempotency/idempotent.ts';
import { payloadRefSchema } from '../payloads/payload-store.ts';
import { sortSuffix } from '../sort-suffix.ts';
import { HISTORY_DAYS } from './schedule-events.ts';

const runFields = {
  run_id: z.string(),
  status: z.enum(['success', 'error', 'timeout']),
  duration_ms: z.number(),
  output: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  deduplicated: z.boolean(),
};

/**
 * The spec's Run object (schedule run, webhook response). `output_as_url`: the output was too large
 * to answer inline, and `output` is a download link instead (core/payloads/output-answer.ts).
 */
export type Run = z.output<z.ZodObject<typeof runFields>> & { output_as_url?: true };

export type RunTrigger = 'cron' | 'webhook' | 'manual';

const runRecordSchema = z.object({
  ...runFields,
  schedule_id: z.string(),
  workspace_id: z.string(),
  agent: z.string(),
  agent_version: z.string(),
  trigger: z.enum(['cron', 'webhook', 'manual']),
  /** The cron slot this run is for; null for webhook and manual runs. */
  scheduled_time: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string(),
  /**
   * Where the output is when its JSON is over ITEM_PAYLOAD_BYTES: in the bundle store (`output` is
   * then null in the item). Never answered: the routes read it back (schedule-run-output.ts).
   */
  output_ref: payloadRefSchema.optional(),
});

/** What is stored per run: the Run object plus where it came from. */
export type RunRecord = z.output<typeof runRecordSchema> & { output_as_url?: true };

/** When a run's record expires (epoch ms): HISTORY_DAYS after it started; its stored output with it. */
export function runExpiresAtMs(record: Pick<RunRecord, 'started_at'>): number {
  return (Math.floor(Date.parse(record.started_at) / 1000) + HISTORY_DAYS * 86_400) * 1000;
}

export const runKeys = {
  /** A schedule's runs, newest last by start time. */
  ofSchedule: (scheduleId: string) => `SCHEDULE#${scheduleId}#RUNS`,
};

/** One run's record, kept HISTORY_DAYS (including after the schedule's deletion). */
export const runEntity = defineEntity({
  name: 'schedule run',
  keys: runKeys,
  schema: runRecordSchema,
  locate: (record) => ({
    pk: runKeys.ofSchedule(record.schedule_id),
    sk: `RUN#${record.started_at}#${sortSuffix()}#${record.run_id}`,
    ttl: runExpiresAtMs(record) / 1000,
  }),
});

/** A run's record kept inside another item (a webhook's idempotency record), as stored: output_ref and all. */
export const runCodec: OutcomeCodec<RunRecord> = {
  encode: (record) => runEntity.embed(record),
  decode: (stored, where) => runEntity.parse(stored, where),
};

export function runOf(record: RunRecord, deduplicated = false): Run {
  return {
    run_id: record.run_id,
    status: record.status,
    duration_ms: record.duration_ms,
    output: record.output,
    error: record.error,
    deduplicated,
    ...(record.output_as_url ? { output_as_url: true as const } : {}),
  };
}

export function runItem(record: RunRecord): Item {
  return runEntity.toItem(record);
}

export function runFromItem(item: Item): RunRecord {
  return runEntity.fromItem(item);
}
