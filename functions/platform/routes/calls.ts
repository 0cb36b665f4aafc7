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
        'The success envelope (a deprecated version adds Deprecation, Sunset and a Link to its successor)',
      headers: ['Deprecation', 'Sunset', 'Link'],
    },
  }),
} as const;
