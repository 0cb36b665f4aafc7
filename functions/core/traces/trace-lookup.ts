/**
 * Finding a call's trace from its request id (docs/traces.md, "Where a trace is"). A call whose
 * time is its request id's (call-time.ts) is found through its record, whose key is that time and
 * the id: the record's `log_at` names the call's log line, which holds the trace; no index entry of
 * the line's own is written for it (one less page in the call's commit: docs/traces.md, "Cost").
 * Any other call's line (an id of another shape, a schedule run's or, on AWS, API Gateway's of an
 * earlier build, or a line written before) is found by its index entry under the id (GSI2).
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { requestIdTime } from '../../shared/request-ids.ts';
import { agentKeys } from '../agents/agent-keys.ts';
import { callRecordKeys, fromCallRecordItem } from '../usage/call-records.ts';
import type { CallOfLine } from './trace-from-record.ts';
import { type CallTraceRecord, callLineSk, traceKeys, traceOfItem } from './trace-record.ts';

/**
 * Where the call's record may be: under this calling account (the reader's own; for an
 * orchestrator run, its sub-call's caller, whose run credential was issued on the run's caller's
 * account), or under the workspace of this agent (its authors' side, GSI1).
 */
export interface RecordPlaces {
  caller: string;
  agentId?: string;
}

export async function loadTrace(
  deps: CoreDeps,
  requestId: string,
  places: RecordPlaces,
): Promise<CallTraceRecord | undefined> {
  const linked = await lineByRecord(deps, requestId, places);
  if (linked) return traceOfItem(linked.line, linked.call);
  const line = await lineByIndex(deps, requestId);
  return line ? traceOfItem(line) : undefined;
}

/** The call's line, and what its record says of the call (which the line leaves out). */
async function lineByRecord(
  deps: CoreDeps,
  requestId: string,
  places: RecordPlaces,
): Promise<{ line: Item; call: CallOfLine } | undefined> {
  const minted = requestIdTime(requestId);
  if (minted === undefined) return undefined;
  const item = await findRecord(deps, callRecordKeys.sk(new Date(minted).toISOString(), requestId), places);
  if (!item || typeof item.log_at !== 'string') return undefined;
  const record = fromCallRecordItem(item);
  const line = await deps.store.get({
    pk: agentKeys.version(record.agent_id).pk,
    sk: callLineSk(item.log_at, requestId),
  });
  if (line?.request_id !== requestId) return undefined;
  return { line, call: record };
}

async function findRecord(deps: CoreDeps, sk: string, places: RecordPlaces): Promise<Item | undefined> {
  const own = await deps.store.get({ pk: callRecordKeys.callerPk(places.caller), sk });
  if (own) return own;
  // Looked for whoever reads, not only the workspace's owners: who may see what is decided after
  // (trace-read.ts), and an orchestrator's owners read a sub-call of another workspace's agent.
  if (!places.agentId) return undefined;
  const version = await deps.store.get(agentKeys.version(places.agentId));
  if (typeof version?.workspace_id !== 'string') return undefined;
  const page = await deps.store.query({
    index: 'gsi1',
    pk: callRecordKeys.authorPk(version.workspace_id),
    sk: { between: [sk, sk] },
    limit: 1,
  });
  return page.items[0];
}

async function lineByIndex(deps: CoreDeps, requestId: string): Promise<Item | undefined> {
  const page = await deps.store.query({ index: 'gsi2', pk: traceKeys.ofCall(requestId), limit: 1 });
  return page.items[0];
}
