import * as z from 'zod';
import { spanViewSchema } from './trace-record.ts';

export const traceParams = z.strictObject({
  id: z.string().min(1).max(100),
  request_id: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a request id as a call answered it (metadata.request_id)'),
});

export const traceViewSpanSchema = spanViewSchema.extend({
  /** The call the span belongs to. */
  request_id: z.string(),
  /** That call's agent, org/name/version. */
  agent: z.string(),
  /** `whole`: every attribute; `outline`: the call's timing and outcome only (docs/traces.md). */
  visibility: z.enum(['whole', 'outline']),
});

export const traceViewSchema = z.object({
  trace_id: z.string(),
  /** The call asked for: the root of the tree shown. */
  request_id: z.string(),
  /** By start time. */
  spans: z.array(traceViewSpanSchema),
  /** Spans of calls shown in outline, and of their sub-calls, that the reader may not see. */
  hidden_spans: z.number().int(),
  /** Spans a call had past what is stored with its record (exported, not kept). */
  dropped_spans: z.number().int(),
});

export type TraceView = z.output<typeof traceViewSchema>;
export type TraceViewSpan = z.output<typeof traceViewSpanSchema>;
