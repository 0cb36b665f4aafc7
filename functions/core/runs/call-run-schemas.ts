import * as z from 'zod';
import { intParam } from '../../shared/query-params.ts';
import { RUN_STATUSES } from './call-run-record.ts';
import { RUN_EVENT_NAMES } from './run-event-record.ts';

/** The run routes' inputs and answers (functions/platform/routes/runs.ts; docs/runs.md). */

export const runIdParams = z.strictObject({ run_id: z.string().min(1).max(100) });

export const runListQuery = z.strictObject({
  limit: intParam(1, 100).default(20),
  cursor: z
    .string()
    .regex(/^[0-9a-f-]{36}$/, 'must be a next_cursor of an earlier page')
    .optional()
    .describe('next_cursor of the previous page, to read the next (older) page'),
  status: z.enum(RUN_STATUSES).optional().describe('Only runs in this status'),
  agent: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9][a-z0-9-]{0,63}(\/v[1-9][0-9]{0,5})?$/,
      'must be org/name or org/name/version',
    )
    .optional()
    .describe('Only runs of this agent (org/name) or version (org/name/version)'),
});

export const runSchema = z.object({
  run_id: z.string().describe('The run’s id (a UUID v7)'),
  status: z
    .enum(RUN_STATUSES)
    .describe('queued and running while it has not ended; then succeeded, failed, timed_out or cancelled'),
  agent: z.string().describe('org/name/version'),
  agent_id: z.string(),
  endpoint: z.string(),
  request_id: z.string().describe('The request that started it: its call record, log line and trace'),
  trace_id: z.string().nullable().describe('Its trace (docs/traces.md); null when tracing is off'),
  created_at: z.string().describe('When its call was received'),
  started_at: z.string().nullable().describe('When it began to run, after admission'),
  ended_at: z.string().nullable(),
  deadline_at: z.string().describe('When it is stopped as timed out if it has not ended'),
  duration_ms: z.number().int().nullable().describe('From created_at to ended_at'),
  cancel_requested_at: z
    .string()
    .nullable()
    .describe('When its caller asked for it to be cancelled (POST /runs/{run_id}/cancel); null if never'),
  webhook: z
    .object({
      url: z.string().describe('Where it goes, without its query (which may hold the receiver’s token)'),
    })
    .nullable()
    .describe(
      'Its completion webhook (X-Platform-Webhook): one signed POST of this document once it ended; null without one',
    ),
  result: z
    .object({
      status: z.number().int().describe('The HTTP status the plain call answers'),
      body: z
        .record(z.string(), z.unknown())
        .describe(
          'Exactly the body the plain call answers: the success envelope ({data, warnings, metadata}), or the error envelope',
        ),
    })
    .nullable()
    .describe('Once it ended: the plain call’s answer; null before'),
});

export const runListSchema = z.object({
  runs: z.array(runSchema).describe('Newest first'),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});

export const runEventsQuery = z.strictObject({
  after: intParam(0, 1_000_000_000)
    .optional()
    .describe('Only the events after this id (the SSE `Last-Event-ID` header says the same, and wins)'),
  limit: intParam(1, 500).default(500),
});

export const runEventSchema = z.object({
  id: z.number().int().describe('Its number in the run, from 1: the SSE event id'),
  event: z.enum(RUN_EVENT_NAMES).describe('As a streamed call’s: delta, step, then result or error'),
  data: z.record(z.string(), z.unknown()).describe('As a streamed call’s event of that name holds'),
  at: z.string(),
});

export const runEventListSchema = z.object({
  events: z.array(runEventSchema).describe('In order'),
  ended: z.boolean().describe('The run ended and its last event is among these or before them'),
  next_after: z.number().int().describe('Pass as after to read on: the last id here, or after'),
});

export const webhookSecretSchema = z.object({
  secret: z
    .string()
    .describe(
      'whsec_ and 43 base64url characters: the key of the HMAC-SHA256 in X-Platform-Signature. Shown here only: store it now',
    ),
  created_at: z.string(),
});

export type RunDocument = z.infer<typeof runSchema>;
export type RunEventView = z.infer<typeof runEventSchema>;
export type RunEventList = z.infer<typeof runEventListSchema>;
export type RunListQuery = z.infer<typeof runListQuery>;
export type RunList = z.infer<typeof runListSchema>;
