/*
 * The run routes: a call started with `Prefer: respond-async`, read back (docs/runs.md). Served by
 * the calls module, whose function runs the calls themselves; but the signing secret of runs'
 * completion webhooks, served with the account's other credentials (API keys) by the api-keys module.
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
  webhookSecretSchema,
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
  cancelRun: route({
    method: 'POST',
    path: '/runs/{run_id}/cancel',
    module: 'calls',
    auth: 'api-key',
    summary: 'Cancel a run: it stops, with everything it started, and ends cancelled',
    description:
      'Stops the caller’s run as a call is stopped when its caller goes away: its model request, its sandbox command and its sub-calls end, its concurrency slot is released, and it ends `cancelled`, its call record saying what it used (docs/runs.md). Answers the run once it has ended (200), or, if it has not within a few seconds, the run with `cancel_requested_at` set (202). A run already cancelled answers the same again; one that ended otherwise is 409.',
    tag: 'Runs',
    params: runIdParams,
    errors: ['CONFLICT'],
    accepted: {
      schema: runSchema,
      description: 'The cancel is under way: the run, still running, with cancel_requested_at set',
      headers: [],
    },
    success: { status: 200, schema: runSchema, description: 'The run, ended cancelled' },
  }),
  rotateWebhookSecret: route({
    method: 'POST',
    path: '/api-keys/webhook-secret',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Make the account’s webhook signing secret, replacing the last; shown once, in this response',
    description:
      'The key runs’ completion webhooks are signed with (X-Platform-Signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, Stripe’s scheme). Kept encrypted in the vault and never shown again: store it now. Making another replaces it at once, for every webhook signed from then on (docs/runs.md, "Told when it ends").',
    tag: 'Runs',
    success: { status: 201, schema: webhookSecretSchema, description: 'The new secret' },
  }),
} as const;
