/*
 * The run routes: a call started with `Prefer: respond-async`, read back (docs/runs.md). Served by
 * the calls module, whose function runs the calls themselves.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import * as z from 'zod';
import {
  runEventListSchema,
  runEventsQuery,
  runIdParams,
  runListQuery,
  runListSchema,
  runSchema,
} from '../../core/runs/call-run-schemas.ts';
import { CALL_STREAM_EVENTS } from '../../edge/call-stream-events.ts';
import { route } from './route-def.ts';

export const runRoutes = {
  listRuns: route({
    method: 'GET',
    path: '/runs',
    module: 'calls',
    auth: 'api-key',
    summary: 'List the caller’s runs, newest first, paged by cursor',
    description:
      'The runs the calling account started with `Prefer: respond-async`, newest first, one page at a time with `cursor`; `status` and `agent` narrow them (docs/runs.md). Runs are kept as long as call records, 90 days.',
    tag: 'Runs',
    query: runListQuery,
    success: { status: 200, schema: runListSchema, description: 'A page of runs' },
  }),
  getRun: route({
    method: 'GET',
    path: '/runs/{run_id}',
    module: 'calls',
    auth: 'api-key',
    summary: 'Get a run: its status, timing and, once it ended, the plain call’s answer',
    description:
      'A run the calling account started (any other account’s is 404): its status, its timing and, once it ended, `result`, the status and body the plain call would have answered (docs/runs.md).',
    tag: 'Runs',
    params: runIdParams,
    success: { status: 200, schema: runSchema, description: 'The run' },
  }),
  getRunEvents: route({
    method: 'GET',
    path: '/runs/{run_id}/events',
    module: 'calls',
    auth: 'api-key',
    summary: 'A run’s events: a streamed call’s, from the start or after the last one read',
    description:
      'The events a streamed call of the run would have sent, in order, each numbered from 1: `delta` as the model writes, `step` for each tool or sub-agent call, and last `result` or `error` (the run’s result body). As JSON, a page after `after`; as Server-Sent Events when the client prefers them by its Accept, followed live until the run’s last event, each with its number as its `id:`, so a client that lost the connection resumes with `Last-Event-ID` (docs/runs.md).',
    tag: 'Runs',
    params: runIdParams,
    query: runEventsQuery,
    headers: z.object({
      'Last-Event-ID': z
        .string()
        .regex(/^[0-9]{1,10}$/)
        .optional()
        .describe('The id of the last event read: only the events after it (SSE’s reconnection)'),
    }),
    success: {
      status: 200,
      schema: runEventListSchema,
      description: 'The events after `after`, and whether the run has ended',
      eventStream: {
        description:
          'When the client’s Accept prefers text/event-stream: the events as Server-Sent Events, each with `id:` its number, as they are logged, until the last (`result` or `error`); a comment line after 15 s with nothing sent; the stream ends after 280 s even if the run has not, and the client reconnects with Last-Event-ID.',
        events: CALL_STREAM_EVENTS,
      },
    },
  }),
} as const;
