/**
 * A call's spans as stored (docs/data-model.md, "Call traces"): on the call's own execution log
 * line, the line that says it succeeded or failed, which every recorded call writes in its record's
 * transaction and keeps 30 days; the trace costs no item of its own. The line is found from the
 * call's request id: through the call's record, when the call's time is its id's (call-time.ts; the
 * record's key is its time and id, and its `log_at` names the line), else by the id's index entry
 * (GSI2); a sub-call's line under its orchestrator run's request id (GSI1). The
 * parent link is the platform's (the run credential's run), never a caller's traceparent: a trace's
 * tree is assembled from these links only, so a caller who reuses another tenant's trace id joins
 * nothing (trace-read.ts).
 *
 * Stored compactly, because its bytes are much of what a trace costs (docs/traces.md, "Cost"): in
 * the embedded store a call's record and line share the table's pages, and each commit writes every
 * page it touched. So the line holds nothing the line or its key already say (the request id, the
 * agent's id), each span is a tuple whose parent is its position in the list, and the attribute
 * names the platform sets are numbers (stored-attributes.ts).
 */
import * as z from 'zod';
import type { AttrValue, Item } from '../../ports/store.ts';
import type { EndedSpan, StoredSpan } from '../../ports/tracer.ts';
import { mintedRequestIdTime, requestIdTime, traceIdOfRequestId } from '../../shared/request-ids.ts';
import { agentKeys } from '../agents/agent-keys.ts';
import { compactAttributes, expandAttributes } from './stored-attributes.ts';
import { type CallOfLine, chatName, fromRecord, isChatName, isModelRequest } from './trace-from-record.ts';

/** A list only where a convention calls for one (`gen_ai.response.finish_reasons`). */
const spanValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);

/** A span as GET /agents/{id}/calls/{request_id}/trace shows it (trace-schemas.ts adds whose it is). */
export const spanViewSchema = z.object({
  span_id: z.string(),
  parent_span_id: z.string().nullable(),
  name: z.string(),
  kind: z.enum(['server', 'client', 'internal']),
  /** ISO time of its start. */
  start_time: z.string(),
  duration_ms: z.number(),
  status: z.enum(['ok', 'error']),
  attributes: z.record(z.string(), spanValue),
});

/** A call's trace: what the line holds, read back whole. */
export interface CallTraceRecord {
  trace_id: string;
  request_id: string;
  /** The orchestrator run's request id, for a call made with its credential. */
  parent_request_id: string | null;
  agent_id: string;
  /** org/name/version */
  agent_ref: string;
  /** The agent's workspace: its owners see the call's spans whole. */
  workspace_id: string;
  caller_account_id: string;
  /** The call's own span (kept even when the spans are past the stored limit). */
  root_span_id: string;
  /** Spans past the stored limit (exported, not stored). */
  dropped_spans: number;
  spans: StoredSpan[];
}

/**
 * What the call's report gives to store: the record with its spans as ended, when the call began
 * (sorts sub-calls), and whether the line is indexed by its request id (GSI2): not when the call's
 * record, found from the id, links it (log_at).
 */
export type CallTraceInput = Omit<CallTraceRecord, 'spans'> & {
  at: string;
  spans: readonly EndedSpan[];
  indexed: boolean;
  /**
   * Whether `trace_id` is the one the request id names (traceIdOfRequestId): then not stored. True
   * only for a request id of that shape (`req_<UUID v7>`), whose time is read without checking it.
   */
  traced_by_request_id: boolean;
  /** The call's record as written with the line: what a line it alone links need not say again. */
  record: CallOfLine;
  /** Whether its spans were exported: what only an exporter reads is then left out (stored-attributes.ts). */
  exported?: boolean;
};

const KIND_CODES = ['internal', 'server', 'client'] as const;

/**
 * A span as stored: [span id, parent, name, kind (KIND_CODES), start (µs after spans_start),
 * duration µs, attributes]: whole microseconds, which JSON writes as the integers they are (a
 * fraction of a millisecond took V8's shortest-digits conversion for every number, every call).
 * Lines written before kept milliseconds with their fraction under spans_start_ms. The parent is
 * the position of a span of the same call, or a span id (the call's own span under its
 * orchestrator's), '' for none; the attributes are name and value in turn, a name by its number in
 * ATTRIBUTE_NAMES (stored-attributes.ts) when it is there. The status is the `error.type`
 * attribute's presence.
 */
const compactSpan = z.tuple([
  z.string(),
  z.union([z.number().int().min(0), z.string()]),
  z.string(),
  z.number().int().min(0).max(2),
  z.number(),
  z.number(),
  z.array(spanValue),
]);

const storedTraceSchema = z.object({
  pk: z.string(),
  request_id: z.string(),
  /** Left out when it is the one the request id names (traceIdOfRequestId: a trace the call began). */
  trace_id: z.string().optional(),
  parent_request_id: z.string().optional(),
  /** Left out of a line its record links (the record says them: CallOfLine). */
  agent_ref: z.string().optional(),
  workspace_id: z.string().optional(),
  caller_account_id: z.string().optional(),
  dropped_spans: z.number().int().optional(),
  /**
   * Epoch ms (whole) at or before the first span's start: the spans' times are µs after it. Left
   * out when it is the ms the request id was minted in (`req_<UUID v7>`: requestIdTime).
   */
  spans_start: z.number().int().optional(),
  /** Lines written before: epoch ms the first span started at, the spans' times in ms after it. */
  spans_start_ms: z.number().optional(),
  /** The call's own span first. */
  spans: z.array(compactSpan).min(1),
});

/** An agent version as a trace names it (its `agent_ref`, the call span's `call <ref>`). */
export function agentRef(org: string, name: string, version: string): string {
  return `${org}/${name}/${version}`;
}

/** The call's own span's name (call-trace-start.ts), which its stored trace leaves out. */
export function rootName(ref: string): string {
  return `call ${ref}`;
}

/** Whether `name` is rootName(ref), without building it (this runs for every call). */
function isRootName(name: string, ref: string): boolean {
  return name.length === ref.length + 5 && name.startsWith('call ') && name.endsWith(ref);
}

/** The sort key of a call's own log line (under its agent's version item): when it was written, and the call. */
export function callLineSk(written: string, requestId: string): string {
  return `${agentKeys.logPrefix}${written}#${requestId}`;
}

export const traceKeys = {
  /** GSI2: a call's trace by its request id, for a call whose record does not link its line. */
  ofCall: (requestId: string) => `CALLTRACE#${requestId}`,
  /** GSI1: the sub-calls an orchestrator run made, by its request id. */
  children: (parentRequestId: string) => `CALLTRACE#${parentRequestId}#SUBCALLS`,
};

/**
 * Whether only the call's record reads its line: neither indexed by its request id nor a sub-call's
 * (which its run's trace reads by itself). Such a line leaves out what the record says.
 */
export function readByRecordAlone(indexed: boolean, parentRequestId: string | null): boolean {
  return !indexed && !parentRequestId;
}

/**
 * Writes the trace's attributes on the call's log line (its key, request id and ttl are the
 * line's): the line is found through the call's record (trace-lookup.ts), or, when `t.indexed`, by
 * GSI2 under the call's request id; a sub-call's also under its parent's by GSI1. Set on the line
 * itself, not spread into it: this runs for every call.
 */
export function writeTraceOnLine(line: Item, t: CallTraceInput): void {
  // A line only its record reads (not indexed, not a sub-call's, which its run's trace reads by
  // itself) leaves out what the record says: the call's outcome and model.
  const record = readByRecordAlone(t.indexed, t.parent_request_id) ? t.record : undefined;
  // The call's own span is stored first, the others in the order they ended (the root ends last,
  // so it is usually last): a span's place is its index, one on if it ended before the root. No
  // copy of the list, no Map for a few spans: this runs for every call.
  const list = t.spans;
  let root = -1;
  let first = Number.POSITIVE_INFINITY;
  // From the end: the root, last, matches the first comparison (its id the very string compared).
  for (let i = list.length - 1; i >= 0; i--) {
    const span = list[i] as EndedSpan;
    if (root < 0 && span.context.spanId === t.root_span_id) root = i;
    if (span.startMs < first) first = span.startMs;
  }
  // Times after the ms the call's request id was minted in, which the id says (the edge mints it as
  // the request arrives, before the call's first span), else after the first span's start. A trace
  // named by the request id has an id of that shape: its time is read without checking it again.
  const minted = t.traced_by_request_id ? mintedRequestIdTime(t.request_id) : requestIdTime(t.request_id);
  const start = minted !== undefined && minted <= first ? minted : Math.floor(first);
  const places = list.length > MANY_SPANS ? placesById(list, root) : undefined;
  const spans: AttrValue[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const span = list[i] as EndedSpan;
    // What the record may say of it: the call's own span's outcome, a model request's model.
    const said = i === root ? 'root' : record && isModelRequest(span.attributes) ? 'model' : 'other';
    spans[placeOf(i, root)] = [
      span.context.spanId,
      parentOf(span, list, root, places),
      // The call's own span's name says the agent the line is under, a model request's the
      // call's model: read back from them.
      (
        said === 'root'
          ? isRootName(span.name, t.agent_ref)
          : said === 'model' && isChatName(span.name, record?.model ?? null)
      )
        ? ''
        : span.name,
      KIND_CODES.indexOf(span.kind),
      Math.round((span.startMs - start) * 1000),
      Math.round(span.durationMs * 1000),
      compactAttributes(span.attributes, said, record, t.exported === true),
    ];
  }
  // A trace the call began is named by its request id: read back from it (no 45 bytes a line).
  if (!t.traced_by_request_id) line.trace_id = t.trace_id;
  if (t.parent_request_id) line.parent_request_id = t.parent_request_id;
  // Who called which agent is the record's to say when the record links the line; a sub-call's line
  // is also read by itself, found under its run (GSI1), so it says them.
  if (t.indexed || t.parent_request_id) {
    line.agent_ref = t.agent_ref;
    line.workspace_id = t.workspace_id;
    line.caller_account_id = t.caller_account_id;
  }
  if (t.dropped_spans > 0) line.dropped_spans = t.dropped_spans;
  if (start !== minted) line.spans_start = start;
  line.spans = spans;
  if (t.indexed) {
    line.gsi2pk = traceKeys.ofCall(t.request_id);
    line.gsi2sk = 'TRACE';
  }
  if (t.parent_request_id) {
    line.gsi1pk = traceKeys.children(t.parent_request_id);
    line.gsi1sk = `${t.at}#${t.request_id}`;
  }
}

/** Past this many spans a call's parents are found through a Map, not by looking along the list. */
const MANY_SPANS = 32;

/** Where the span at `index` of the ended list is stored: the root first, the others after it. */
function placeOf(index: number, root: number): number {
  return index === root ? 0 : index < root ? index + 1 : index;
}

function placesById(list: readonly EndedSpan[], root: number): Map<string, number> {
  const places = new Map<string, number>();
  for (let i = 0; i < list.length; i++) places.set((list[i] as EndedSpan).context.spanId, placeOf(i, root));
  return places;
}

/** A span's parent as stored: the place of a span of the same call, else its id ('' for none). */
function parentOf(
  span: EndedSpan,
  list: readonly EndedSpan[],
  root: number,
  places: Map<string, number> | undefined,
): number | string {
  const parent = span.parentSpanId;
  if (!parent) return '';
  // Most spans hang under the call's own, whose id is the very string they were given.
  if (root >= 0 && parent === (list[root] as EndedSpan).context.spanId) return 0;
  if (places) return places.get(parent) ?? parent;
  for (let i = 0; i < list.length; i++)
    if ((list[i] as EndedSpan).context.spanId === parent) return placeOf(i, root);
  return parent;
}

/**
 * The trace a log line item holds (its log fields and placement left out); undefined for a line
 * whose trace is not in this shape (one written while traces were being built, before the shape
 * was settled), which reads as no trace rather than failing the read.
 */
export function traceOfItem(item: Item, call?: CallOfLine): CallTraceRecord | undefined {
  const parsed = storedTraceSchema.safeParse(item);
  if (!parsed.success) return undefined;
  const t = parsed.data;
  // A line without who called which agent is one its record alone reads, which says the rest.
  const record = t.agent_ref === undefined ? call : undefined;
  const ref = t.agent_ref ?? (record && agentRef(record.org, record.agent, record.version));
  const workspaceId = t.workspace_id ?? call?.workspace_id;
  const callerAccountId = t.caller_account_id ?? call?.caller_account_id;
  if (ref === undefined || workspaceId === undefined || callerAccountId === undefined) return undefined;
  const traceId = t.trace_id ?? traceIdOfRequestId(t.request_id);
  if (traceId === undefined) return undefined;
  const agentId = t.pk.slice(agentKeys.version('').pk.length);
  const rootId = (t.spans[0] as (typeof t.spans)[number])[0];
  const ids = t.spans.map(([id]) => id);
  // Times in µs after spans_start (else the request id's time), or (lines written before) in ms
  // after spans_start_ms.
  const perMs = t.spans_start === undefined && t.spans_start_ms !== undefined ? 1 : 1000;
  const base = t.spans_start ?? t.spans_start_ms ?? requestIdTime(t.request_id);
  if (base === undefined) return undefined;
  return {
    trace_id: traceId,
    request_id: t.request_id,
    parent_request_id: t.parent_request_id ?? null,
    agent_id: agentId,
    agent_ref: ref,
    workspace_id: workspaceId,
    caller_account_id: callerAccountId,
    root_span_id: rootId,
    dropped_spans: t.dropped_spans ?? 0,
    spans: t.spans.map(([span_id, parent, name, kind, start, duration, packed]): StoredSpan => {
      const isRoot = span_id === rootId;
      const attributes = expandAttributes(packed);
      if (record) fromRecord(attributes, isRoot, record);
      return {
        span_id,
        parent_span_id: (typeof parent === 'number' ? ids[parent] : parent) || null,
        name: name !== '' ? name : isRoot ? rootName(ref) : record ? chatName(attributes) : name,
        kind: KIND_CODES[kind] ?? 'internal',
        start_ms: base + start / perMs,
        duration_ms: duration / perMs,
        status: attributes['error.type'] === undefined ? 'ok' : 'error',
        attributes: isRoot
          ? {
              'agenthost.request_id': t.request_id,
              'agenthost.agent': ref,
              'agenthost.agent.id': agentId,
              ...attributes,
            }
          : attributes,
      };
    }),
  };
}
