import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { parseIsoTime } from '../../shared/iso-time.ts';
import { defineEntity } from '../entity.ts';
import { CALL_RECORD_RETENTION_DAYS } from './call-record-retention.ts';
import { callLogEntrySchema } from './usage-schemas.ts';

// The log entry's fields (usage-schemas.ts) with the caller's key id and the sandbox and billing
// figures. Loose: a log entry shows fields the gateway adds later (usage-reads.ts toLogEntry).
const callRecordSchema = z.looseObject({
  ...callLogEntrySchema.shape,
  caller_key_id: z.string(),
  /** Sandbox run time (code runtime, managed loop); 0 for direct-LLM calls. */
  compute_ms: z.number().optional(),
  /** Credits the caller paid for this call (a paid agent; 0 when refunded or free). */
  credits: z.number().optional(),
});

/** One agent call, as the gateway records it (spec "Attribution and records"). */
export type CallRecord = z.output<typeof callRecordSchema>;

export const callRecordKeys = {
  /** The caller's side: pk per calling account, sorted by time. */
  callerPk: (accountId: string) => `ACCOUNT#${accountId}#CALLS`,
  /** The author's side: GSI1 partition per agent workspace, sorted by time. */
  authorPk: (workspaceId: string) => `WS#${workspaceId}#CALLS`,
  sk: (at: string, requestId: string) => `${at}#${requestId}`,
};

/** A call's record: under its caller, indexed under its agent's workspace, kept CALL_RECORD_RETENTION_DAYS. */
export const callRecordEntity = defineEntity({
  name: 'call record',
  keys: callRecordKeys,
  schema: callRecordSchema,
  locate: (record) => {
    const sk = callRecordKeys.sk(record.at, record.request_id);
    return {
      pk: callRecordKeys.callerPk(record.caller_account_id),
      sk,
      gsi1pk: callRecordKeys.authorPk(record.workspace_id),
      gsi1sk: sk,
      ttl: Math.floor(parseIsoTime(record.at) / 1000) + CALL_RECORD_RETENTION_DAYS * 86_400,
    };
  },
});

export function callRecordItem(record: CallRecord): Item {
  return callRecordEntity.toItem(record);
}

/**
 * The record's fields of the platform's own, not shown: `log_at`, when the call's log line was
 * written, which finds its trace (traces/trace-lookup.ts).
 */
const INTERNAL_FIELDS = ['log_at'] as const;

/** A record as the usage reads show it (the platform's own fields left out). */
export function fromCallRecordItem(item: Item): CallRecord {
  const record = callRecordEntity.fromItem(item);
  for (const field of INTERNAL_FIELDS) delete record[field];
  return record;
}

export async function writeCallRecord(deps: CoreDeps, record: CallRecord): Promise<void> {
  await deps.store.put(callRecordItem(record));
}
