import * as z from 'zod';
import { defineEntity } from '../entity.ts';

/*
 * A run's events (docs/runs.md, "Following a run"): what a streamed call would have sent its
 * client, kept so that the run's caller reads them from the start, or from after the last one it
 * saw (`Last-Event-ID`), while the run goes on and after it ended. Numbered from 1 in the order
 * they happened; the number is the event's SSE id. One writer a run (the process running it), so
 * the numbers are its own counter's, each item written with `notExists`. The log holds `delta`
 * and `step`; the last event, `result` or `error`, is made from the run's record by its readers.
 */

export const RUN_EVENT_NAMES = ['delta', 'step', 'result', 'error'] as const;
export type RunEventName = (typeof RUN_EVENT_NAMES)[number];

const runEventSchema = z.object({
  run_id: z.string(),
  seq: z.number().int().min(1),
  event: z.enum(RUN_EVENT_NAMES),
  /** The event's JSON, as a streamed call's `data:` line holds it. */
  data: z.record(z.string(), z.unknown()),
  at: z.string(),
  /** Expires with its run (epoch ms). */
  expires_ms: z.number().int(),
});

export type RunEvent = z.output<typeof runEventSchema>;

export const runEventKeys = {
  ofRun: (runId: string) => `RUN#${runId}#EVENTS`,
  /** Zero-padded, so the sort key's order is the events' order. */
  sk: (seq: number) => `EV#${String(seq).padStart(10, '0')}`,
};

export const runEventEntity = defineEntity({
  name: 'run event',
  keys: runEventKeys,
  schema: runEventSchema,
  locate: (record) => ({
    pk: runEventKeys.ofRun(record.run_id),
    sk: runEventKeys.sk(record.seq),
    ttl: Math.floor(record.expires_ms / 1000),
  }),
});
