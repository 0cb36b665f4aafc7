import type { CoreDeps } from '../../ports/core-deps.ts';
import { answerStoredOutput } from '../payloads/output-answer.ts';
import { ITEM_PAYLOAD_BYTES, jsonOf, payloadKey, storePayload } from '../payloads/payload-store.ts';
import { type RunRecord, runExpiresAtMs } from './schedule-run-record.ts';

/**
 * A run's output as its record keeps it: in the record up to ITEM_PAYLOAD_BYTES of JSON, else in
 * the bundle store behind `output_ref`, kept as long as the record (core/payloads/). Before issue
 * 33 a run's output over about 400 KB made its record too large for DynamoDB: the run was lost.
 */
export async function withStoredOutput(deps: CoreDeps, record: RunRecord): Promise<RunRecord> {
  if (record.output === null || record.output_ref) return record;
  const { json, bytes } = jsonOf(record.output);
  if (bytes <= ITEM_PAYLOAD_BYTES) return record;
  const key = payloadKey('run-outputs', record.schedule_id, record.run_id);
  const ref = await storePayload(deps, key, json, runExpiresAtMs(record));
  return { ...record, output: null, output_ref: ref };
}

/**
 * A stored run as the API answers it (trigger, webhook, GET …/runs): the output read back from the
 * bundle store, or, when too large to answer inline, a download link with `output_as_url: true`
 * (core/payloads/output-answer.ts). `output_ref` is never answered.
 */
export async function answeredRun(
  deps: CoreDeps,
  record: RunRecord,
  /** The output the run just stored, still in memory: not read back. */
  held?: Record<string, unknown> | null,
): Promise<RunRecord> {
  const { output_ref: ref, ...rest } = record;
  if (!ref) return rest;
  const { output, linked } = await answerStoredOutput(deps, ref, held ? JSON.stringify(held) : undefined);
  return { ...rest, output, ...(linked ? { output_as_url: true as const } : {}) };
}
