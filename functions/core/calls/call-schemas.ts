import * as z from 'zod';
import { MAX_CALL_BODY_BYTES } from './call-limits.ts';

export const callParams = z.strictObject({
  org: z.string().regex(/^[a-z0-9][a-z0-9-]{0,38}$/, 'must be an org slug'),
  agent: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be an agent name'),
  version: z.string().regex(/^v[1-9][0-9]{0,5}$/, 'must be a version such as v1'),
  endpoint: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be an endpoint name such as run'),
});

export const callEnvelopeSchema = z.object({
  data: z.record(z.string(), z.unknown()),
  warnings: z.array(z.object({ code: z.string(), field: z.string().optional(), message: z.string() })),
  metadata: z.object({ request_id: z.string(), processing_time_ms: z.number().int(), version: z.string() }),
});

/** Streamed: the local server spools it to a temporary file, and multipart files go to disk. */
export const CALL_BODY = {
  maxBytes: MAX_CALL_BODY_BYTES,
  contentTypes: ['application/json', 'multipart/form-data'],
  stream: true as const,
};
