/*
 * The call route: POST /{org}/{agent}/{version}/{endpoint}.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import { CALL_BODY, callEnvelopeSchema, callHeaders, callParams } from '../../core/calls/call-schemas.ts';
import { runSchema } from '../../core/runs/call-run-schemas.ts';
import { CALL_STREAM_EVENTS } from '../../edge/call-stream-events.ts';
import { route } from './route-def.ts';

export const callRoutes = {
  callAgent: route({
    method: 'POST',
    path: '/{org}/{agent}/{version}/{endpoint}',
    module: 'calls',
    auth: 'api-key',
    acceptsRunCredential: true,
    summary: 'Call an agent: a JSON object matching its input_schema, or multipart/form-data with files',
    description:
      'Runs the agent version’s endpoint with the body as its input (checked against its input_schema) and answers its output in the success envelope, or, when the client prefers text/event-stream, as Server-Sent Events, or, with `Prefer: respond-async`, 202 with a run to read the answer from later (docs/runs.md). Counts against the daily quota and concurrency, may cost credits, and is recorded with its trace (docs/calls.md). The one route a run credential may use, within its run’s dependencies, hops, deadline and budget.',
    tag: 'Calls',
    params: callParams,
    binaryBody: CALL_BODY,
    headers: callHeaders,
    errors: [
      'MISSING_SECRETS',
      'INSUFFICIENT_CREDITS',
      'FORBIDDEN',
      'UNPROCESSABLE',
      'LLM_ERROR',
      'SERVICE_UNAVAILABLE',
      'TIMEOUT',
    ],
    accepted: {
      schema: runSchema,
      description:
        'With `Prefer: respond-async` (RFC 7240), once the call is admitted and charged: its run, still running, with a Location to read it from (GET /runs/{run_id}) and Preference-Applied. The call runs on whether the client stays or not, and its run ends with exactly the answer the plain call would have had. Refusals before it runs are the ordinary answers (docs/runs.md).',
      headers: ['Location', 'Preference-Applied', 'X-Trace-Id'],
    },
    success: {
      status: 200,
      schema: callEnvelopeSchema,
      description:
        'The success envelope with the call’s trace (X-Trace-Id); a deprecated version adds Deprecation, Sunset and a Link to its successor',
      headers: ['X-Trace-Id', 'Deprecation', 'Sunset', 'Link'],
      eventStream: {
        description:
          'When the client’s Accept prefers text/event-stream (RFC 9110: `text/event-stream` alone, or weighted above application/json; a tie is JSON), the call as Server-Sent Events once it runs: `delta` events as the model writes, `step` for each tool or sub-agent call of a managed loop, a comment line after 15 s with nothing sent, and last `result` or `error`. Each event’s `data:` line is one JSON object, of the schema its `event:` name gives (the variant of that title). Refusals before it runs are the ordinary JSON answers (docs/calls.md, "Streamed calls").',
        events: CALL_STREAM_EVENTS,
      },
    },
  }),
} as const;
