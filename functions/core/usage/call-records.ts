import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';

/** Call records are kept this long (then the store's TTL removes them). */
export const CALL_RECORD_RETENTION_DAYS = 90;

/** One agent call, as the gateway records it (spec "Attribution and records"). */
export interface CallRecord {
  request_id: string;
  /** ISO 8601: when the call arrived. */
  at: string;
  caller_account_id: string;
  caller_key_id: string;
  /** X-Platform-Tenant, when the caller sent one. */
  tenant: string | null;
  agent_id: string;
  org: string;
  agent: string;
  version: string;
  /** The agent's workspace: author-side usage is read by it. */
  workspace_id: string;
  endpoint: string;
  status: 'success' | 'error' | 'timeout';
  error_code: string | null;
  http_status: number;
  duration_ms: number;
  provider: string | null;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Sandbox run time (code runtime, managed loop); 0 for direct-LLM calls. */
  compute_ms?: number;
  /** Credits the caller paid for this call (a paid agent; 0 when refunded or free). */
  credits?: number;
}

export const callRecordKeys = {
  /** The caller's side: pk per calling account, sorted by time. */
  callerPk: (accountId: string) => `ACCOUNT#${accountId}#CALLS`,
  /** The author's side: GSI1 partition per agent workspace, sorted by time. */
  authorPk: (workspaceId: string) => `WS#${workspaceId}#CALLS`,
  sk: (at: string, requestId: string) => `${at}#${requestId}`,
};

export function callRecordItem(record: CallRecord): Item {
  const sk = callRecordKeys.sk(record.at, record.request_id);
  return {
    pk: callRecordKeys.callerPk(record.caller_account_id),
    sk,
    ...(record as unknown as Record<string, never>),
    gsi1pk: callRecordKeys.authorPk(record.workspace_id),
    gsi1sk: sk,
    ttl: Math.floor(Date.parse(record.at) / 1000) + CALL_RECORD_RETENTION_DAYS * 86_400,
  };
}

export function fromCallRecordItem(item: Item): CallRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ttl: _ttl, ...rest } = item;
  return rest as unknown as CallRecord;
}

export async function writeCallRecord(deps: CoreDeps, record: CallRecord): Promise<void> {
  await deps.store.put(callRecordItem(record));
}
