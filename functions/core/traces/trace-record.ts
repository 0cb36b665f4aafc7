/**
 * A call's spans as stored with its record (docs/data-model.md, "Call traces"): one item per call,
 * found by its request id, and under its parent call's request id when it is a sub-call made with
 * an orchestrator run's credential. The parent link is the platform's (the credential's run), never
 * a caller's traceparent: a trace's tree is assembled from these links only, so a caller who reuses
 * another tenant's trace id joins nothing (trace-read.ts).
 */
import * as z from 'zod';
import type { Item } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';

/** As long as the call's execution log lines (call-report.ts): what a trace explains. */
export const TRACE_RETENTION_DAYS = 30;

const spanValue = z.union([z.string(), z.number(), z.boolean()]);

export const storedSpanSchema = z.object({
  span_id: z.string(),
  parent_span_id: z.string().nullable(),
  name: z.string(),
  kind: z.enum(['server', 'client', 'internal']),
  start_time: z.string(),
  duration_ms: z.number(),
  status: z.enum(['ok', 'error']),
  attributes: z.record(z.string(), spanValue),
});

const callTraceSchema = z.object({
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
  spans: z.array(storedSpanSchema),
  /** Spans past the stored limit (exported, not stored). */
  dropped_spans: z.number().int(),
});

export type CallTraceRecord = z.output<typeof callTraceSchema>;

export const traceKeys = {
  pk: (requestId: string) => `CALLTRACE#${requestId}`,
  sk: 'TRACE',
  /** GSI2: the sub-calls an orchestrator run made, by its request id. */
  children: (parentRequestId: string) => `CALLTRACE#${parentRequestId}#SUBCALLS`,
};

export const callTraceEntity = defineEntity({
  name: 'call trace',
  keys: traceKeys,
  schema: callTraceSchema,
  locate: (t) => ({
    pk: traceKeys.pk(t.request_id),
    sk: traceKeys.sk,
    ...(t.parent_request_id
      ? { gsi2pk: traceKeys.children(t.parent_request_id), gsi2sk: `${t.at}#${t.request_id}` }
      : {}),
    ttl: Math.floor(Date.parse(t.at) / 1000) + TRACE_RETENTION_DAYS * 86_400,
  }),
});

export function callTraceItem(record: CallTraceRecord): Item {
  return callTraceEntity.toItem(record);
}
