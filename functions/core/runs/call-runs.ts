import type { CoreDeps } from '../../ports/core-deps.ts';
import { type AttrValue, ConditionFailedError, cond } from '../../ports/store.ts';
import { builtUuidV7 } from '../../shared/request-ids.ts';
import type { CallContext } from '../calls/call-context.ts';
import { ITEM_PAYLOAD_BYTES, jsonOf, payloadKey, storePayload } from '../payloads/payload-store.ts';
import {
  type CallRunRecord,
  callRunEntity,
  callRunKeys,
  type RunStatus,
  runExpiresAtMs,
} from './call-run-record.ts';

/*
 * A run's life as its record tells it (docs/runs.md): written `running` once its call is admitted,
 * charged and about to run (the moment a streamed call opens its stream), and ended once, with the
 * plain call's answer, by whoever ran it. Only a record still `running` is ended, so a run ends one
 * way, whichever writer comes first.
 */

/** A fresh run id: a UUID v7, so an account's runs sort by when they began. */
export function newRunId(): string {
  return builtUuidV7();
}

/** Writes the run of `call` as running; its id is `runId`, its completion webhook `webhookUrl`. */
export async function openRun(
  deps: CoreDeps,
  call: CallContext,
  runId: string,
  webhookUrl: string | null = null,
): Promise<CallRunRecord> {
  const { auth, agent } = call;
  const record: CallRunRecord = {
    run_id: runId,
    account_id: auth.accountId,
    key_id: auth.keyId,
    agent_id: agent.id,
    agent: `${agent.org}/${agent.name}/${agent.version}`,
    workspace_id: agent.workspace_id,
    endpoint: call.request.endpoint,
    status: 'running',
    request_id: call.request.requestId,
    trace_id: call.trace?.traceId ?? null,
    created_at: call.at,
    started_at: deps.clock.now().toISOString(),
    ended_at: null,
    deadline_at: new Date(call.deadline.platformMs()).toISOString(),
    result_status: null,
    result_body: null,
    cancel_requested_at: null,
    webhook_url: webhookUrl,
  };
  await deps.store.put(callRunEntity.toItem(record), { condition: cond.notExists() });
  return record;
}

/** How a run ended: its status, and the plain call's answer (status and JSON body). */
export interface RunEnding {
  status: Exclude<RunStatus, 'queued' | 'running'>;
  http: number;
  body: Record<string, unknown>;
}

/**
 * Ends a running run with `ending`; false when it had already ended (a run ends once). A success's
 * data too large for the record goes to the bundle store first, so no record points at nothing.
 */
export async function endRun(deps: CoreDeps, record: CallRunRecord, ending: RunEnding): Promise<boolean> {
  const { body, ref } = await withStoredData(deps, record, ending.body);
  // An update of the ending's fields alone: what another writer set meanwhile (a cancel's mark) stays.
  const set: Record<string, AttrValue> = {
    status: ending.status,
    ended_at: deps.clock.now().toISOString(),
    result_status: ending.http,
    result_body: body as { [key: string]: AttrValue },
  };
  if (ref) set.output_ref = ref;
  const key = { pk: callRunKeys.ofAccount(record.account_id), sk: callRunKeys.sk(record.run_id) };
  try {
    await deps.store.update(key, { set }, { condition: cond.eq('status', 'running') });
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** The body as the record keeps it: its `data` over ITEM_PAYLOAD_BYTES of JSON stored apart. */
async function withStoredData(
  deps: CoreDeps,
  record: CallRunRecord,
  body: Record<string, unknown>,
): Promise<{ body: Record<string, unknown>; ref?: CallRunRecord['output_ref'] }> {
  if (body.data === undefined) return { body };
  const { json, bytes } = jsonOf(body.data);
  if (bytes <= ITEM_PAYLOAD_BYTES) return { body };
  const key = payloadKey('run-outputs', 'calls', record.run_id);
  const ref = await storePayload(deps, key, json, runExpiresAtMs(record));
  return { body: { ...body, data: null }, ref };
}
