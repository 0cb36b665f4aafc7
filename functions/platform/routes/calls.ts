/*
 * The call route: POST /{org}/{agent}/{version}/{endpoint}.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import { CALL_BODY, callEnvelopeSchema, callHeaders, callParams } from '../../core/calls/call-schemas.ts';
import { route } from './route-def.ts';

export const callRoutes = {
  callAgent: route({
    method: 'POST',
    path: '/{org}/{agent}/{version}/{endpoint}',
    module: 'calls',
    auth: 'api-key',
    acceptsRunCredential: true,
    summary: 'Call an agent: a JSON object matching its input_schema, or multipart/form-data with files',
    tag: 'Calls',
    params: callParams,
    binaryBody: CALL_BODY,
    headers: callHeaders,
    errors: ['MISSING_SECRETS', 'INSUFFICIENT_CREDITS', 'FORBIDDEN', 'UNPROCESSABLE', 'LLM_ERROR', 'TIMEOUT'],
    success: {
      status: 200,
      schema: callEnvelopeSchema,
      description:
        'The success envelope with the call’s trace (X-Trace-Id); a deprecated version adds Deprecation, Sunset and a Link to its successor',
      headers: ['X-Trace-Id', 'Deprecation', 'Sunset', 'Link'],
      eventStream:
        'With Accept: text/event-stream, the call as Server-Sent Events once it runs: `delta` ({"text"}) as the model writes, `step` ({"kind", "name", "outcome", "duration_ms"}) for each tool or sub-agent call of a managed loop, a comment line every 15 s, and last `result` (the success envelope) or `error` (the error envelope). Refusals before it runs are the ordinary JSON answers (docs/calls.md, "Streamed calls").',
    },
  }),
} as const;
