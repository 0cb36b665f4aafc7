/**
 * A call's spans as stored (docs/data-model.md, "Call traces"): on the call's own execution log
 * line, the line that says it succeeded or failed, which every recorded call writes in its record's
 * transaction and keeps 30 days; the trace costs no item of its own. The line is found by the call's
 * request id (GSI2), and a sub-call's line under its orchestrator run's request id (GSI1). The
 * parent link is the platform's (the run credential's run), never a caller's traceparent: a trace's
 * tree is assembled from these links only, so a caller who reuses another tenant's trace id joins
 * nothing (trace-read.ts).
 */
import * as z from 'zod';
import type { Item } from '../../ports/store.ts';
import type { StoredSpan } from '../../ports/tracer.ts';

const spanValue = z.union([z.string(), z.number(), z.boolean()]);

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

const traceFields = {
  trace_id: z.string(),
  request_id: z.string(),
  /** The orchestrator run's request id, for a call made with its credential. */
  parent_request_id: z.string().nullable(),
  /** When the call began (ISO). */
  at: z.string(),
  agent_id: z.string(),
  /** org/name/version */
  agent_ref: z.string(),
  /** The agent's workspace: its owners see the call's spans whole. */
  workspace_id: z.string(),
  caller_account_id: z.string(),
  /** The call's own span (kept even when the spans are past the stored limit). */
  root_span_id: z.string(),
  /** Spans past the stored limit (exported, not stored). */
  dropped_spans: z.number().int(),
};

const KIND_CODES = ['internal', 'server', 'client'] as const;

/**
 * A span as stored: a tuple, its start as milliseconds after the first span's, its status from its
 * `error.type` (side by side in `npm run bench:calls`, the bytes a call's line carries are most of
 * what a trace costs the local store).
 */
const compactSpan = z.tuple([
  z.string(), // span_id
  z.string(), // parent_span_id, '' for none
  z.string(), // name
  z.number().int().min(0).max(2), // kind: KIND_CODES
  z.number(), // start, ms after spans_start_ms
  z.number(), // duration_ms
  z.record(z.string(), spanValue), // attributes
]);

/** The root span's attributes the trace's own fields hold (not stored twice). */
const ROOT_FROM_FIELDS = ['agenthost.request_id', 'agenthost.agent', 'agenthost.agent.id'] as const;

const callTraceSchema = z
  .object({
    ...traceFields,
    /** Epoch ms the first span started at. */
    spans_start_ms: z.number(),
    spans: z.array(compactSpan),
  })
  .transform(({ spans_start_ms, spans, ...t }) => ({
    ...t,
    spans: spans.map(
      ([span_id, parent, name, kind, start, duration_ms, attributes]): StoredSpan => ({
        span_id,
        parent_span_id: parent || null,
        name,
        kind: KIND_CODES[kind] ?? 'internal',
        start_ms: spans_start_ms + start,
        duration_ms,
        status: attributes['error.type'] === undefined ? 'ok' : 'error',
        attributes:
          span_id === t.root_span_id
            ? {
                'agenthost.request_id': t.request_id,
                'agenthost.agent': t.agent_ref,
                'agenthost.agent.id': t.agent_id,
                ...attributes,
              }
            : attributes,
      }),
    ),
  }));

export type CallTraceRecord = z.output<typeof callTraceSchema>;

export const traceKeys = {
  /** GSI2: a call's trace by its request id. */
  ofCall: (requestId: string) => `CALLTRACE#${requestId}`,
  /** GSI1: the sub-calls an orchestrator run made, by its request id. */
  children: (parentRequestId: string) => `CALLTRACE#${parentRequestId}#SUBCALLS`,
};

/**
 * The trace's attributes on the call's log line (its key and ttl are the line's): the line is found
 * by GSI2 under the call's request id, and a sub-call's under its parent's by GSI1.
 */
export function traceOnLogLine(t: CallTraceRecord): Record<string, unknown> {
  let start = Number.POSITIVE_INFINITY;
  for (const span of t.spans) if (span.start_ms < start) start = span.start_ms;
  const spans = t.spans.map((span) => {
    const attributes =
      span.span_id === t.root_span_id ? withoutKeys(span.attributes, ROOT_FROM_FIELDS) : span.attributes;
    return [
      span.span_id,
      span.parent_span_id ?? '',
      span.name,
      KIND_CODES.indexOf(span.kind),
      Math.round((span.start_ms - start) * 1000) / 1000,
      span.duration_ms,
      attributes,
    ];
  });
  return {
    ...t,
    spans,
    spans_start_ms: start,
    gsi2pk: traceKeys.ofCall(t.request_id),
    gsi2sk: 'TRACE',
    ...(t.parent_request_id
      ? { gsi1pk: traceKeys.children(t.parent_request_id), gsi1sk: `${t.at}#${t.request_id}` }
      : {}),
  };
}

/** The trace a log line item holds (its log fields and placement left out). */
export function traceOfItem(item: Item): CallTraceRecord {
  return callTraceSchema.parse(item);
}

function withoutKeys<T extends object>(value: T, keys: readonly string[]): T {
  const out = { ...value };
  for (const key of keys) delete (out as Record<string, unknown>)[key];
  return out;
}
