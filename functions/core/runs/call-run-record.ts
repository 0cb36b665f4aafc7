import * as z from 'zod';
import { defineEntity } from '../entity.ts';
import { payloadRefSchema } from '../payloads/payload-store.ts';
import { CALL_RECORD_RETENTION_DAYS } from '../usage/call-record-retention.ts';
import { RUN_STATUSES, type RunStatus } from './run-names.ts';

/*
 * A run: an agent call started with `Prefer: respond-async` (docs/runs.md), answered 202 once it is
 * admitted and charged, and read back at GET /runs/{run_id} while it runs and after it ended. It
 * sits under its caller's account, keyed by its id: a UUID v7, so the partition reads newest first
 * in id order, and a reader of another account looks under its own account and finds nothing,
 * which is the 404 the spec asks for, with no index to leak through.
 */

export { RUN_STATUSES, type RunStatus } from './run-names.ts';

/** The statuses a run ends in. */
export const ENDED_STATUSES: ReadonlySet<RunStatus> = new Set([
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
]);

const callRunRecordSchema = z.object({
  run_id: z.string(),
  account_id: z.string(),
  /** The API key that started it (an operator finds the caller's key from the run). */
  key_id: z.string(),
  agent_id: z.string(),
  /** `org/name/version`. */
  agent: z.string(),
  workspace_id: z.string(),
  endpoint: z.string(),
  status: z.enum(RUN_STATUSES),
  /** The request that started the run: its call record, log line and trace are found by it. */
  request_id: z.string(),
  trace_id: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  /** The call's deadline on the platform clock: a run still open well past it was interrupted. */
  deadline_at: z.string(),
  /** The HTTP status the plain call would have answered; null while it runs. */
  result_status: z.number().int().nullable(),
  /**
   * The body the plain call would have answered (the success or the error envelope), null while it
   * runs. A success's `data` over ITEM_PAYLOAD_BYTES of JSON is in the bundle store behind
   * `output_ref` instead, its `data` null here (call-runs.ts).
   */
  result_body: z.record(z.string(), z.unknown()).nullable(),
  output_ref: payloadRefSchema.optional(),
  /** When its caller asked for it to be cancelled (POST /runs/{run_id}/cancel); null if never. */
  cancel_requested_at: z.string().nullable().default(null),
  /**
   * Where its completion webhook goes (X-Platform-Webhook), its query kept: it may hold the
   * receiver's token, and is only ever answered without it (describeRun). Null without one.
   */
  webhook_url: z.string().nullable().default(null),
});

export type CallRunRecord = z.output<typeof callRunRecordSchema>;

export const callRunKeys = {
  /** An account's runs, in id order (UUID v7: oldest first). */
  ofAccount: (accountId: string) => `ACCOUNT#${accountId}#RUNS`,
  sk: (runId: string) => `RUN#${runId}`,
};

/** When a run's record (and its stored output) expires, epoch ms: kept as long as call records. */
export function runExpiresAtMs(record: Pick<CallRunRecord, 'created_at'>): number {
  return Date.parse(record.created_at) + CALL_RECORD_RETENTION_DAYS * 86_400_000;
}

/** One run, under its caller's account, kept as long as call records are. */
export const callRunEntity = defineEntity({
  name: 'run',
  keys: callRunKeys,
  schema: callRunRecordSchema,
  locate: (record) => ({
    pk: callRunKeys.ofAccount(record.account_id),
    sk: callRunKeys.sk(record.run_id),
    ttl: Math.floor(runExpiresAtMs(record) / 1000),
  }),
});
