import * as z from 'zod';
import { MAX_CALL_BODY_BYTES } from './call-limits.ts';

export const callParams = z.strictObject({
  org: z.string().regex(/^[a-z0-9][a-z0-9-]{0,38}$/, 'must be an org slug'),
  agent: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be an agent name'),
  version: z.string().regex(/^v[1-9][0-9]{0,5}$/, 'must be a version such as v1'),
  endpoint: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be an endpoint name such as run'),
});

export const callEnvelopeSchema = z.object({
  data: z
    .record(z.string(), z.unknown())
    .describe(
      'The agent’s output; when too large to answer inline (docs/calls.md, "Large outputs"), a download link instead: {output_url, output_bytes, output_sha256, expires_at}, with the warning OUTPUT_AS_URL',
    ),
  warnings: z.array(z.object({ code: z.string(), field: z.string().optional(), message: z.string() })),
  metadata: z.object({
    request_id: z.string(),
    processing_time_ms: z.number().int(),
    version: z.string(),
    /** The call's trace: GET /agents/{id}/calls/{request_id}/trace (docs/traces.md). */
    trace_id: z.string().optional(),
  }),
});

/**
 * The X-Platform-* request headers of a call (spec "Calling an agent", docs/calls.md), for
 * /openapi.json: call-headers.ts, deadline.ts and the engines read them by name.
 */
export const callHeaders = z.object({
  Prefer: z
    .string()
    .optional()
    .describe(
      '`respond-async` (RFC 7240): answer 202 with the call’s run once it is admitted and charged, instead of waiting for its output (docs/runs.md). Other preferences are ignored',
    ),
  'X-Platform-Webhook': z
    .string()
    .max(2048)
    .optional()
    .describe(
      'With `Prefer: respond-async`: a URL to POST the run’s document to once it ended, signed in X-Platform-Signature with the account’s webhook signing secret (POST /api-keys/webhook-secret) and retried with backoff; refused (400) without respond-async, without a signing secret, or at an address the platform may not reach (docs/runs.md, "Told when it ends")',
    ),
  'X-Platform-Max-Hops': z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/)
    .optional()
    .describe('Maximum call-chain depth for orchestrators, 1 to 999'),
  'X-Platform-Tenant': z
    .string()
    .optional()
    .describe('Tenant id recorded with the call for usage attribution'),
  'X-Platform-Skills': z
    .string()
    .optional()
    .describe('Comma-separated skill refs (org/skill or org/skill@v1) added to the agent’s defaults'),
  'X-Platform-Skills-Only': z
    .string()
    .optional()
    .describe('Use only these skill refs (or `true`, with the refs in X-Platform-Skills)'),
  'X-Platform-No-Skills': z.enum(['true', 'false']).optional().describe('`true` disables all skills'),
  'X-Platform-Deadline-Ms': z
    .string()
    .regex(/^[0-9]+$/)
    .optional()
    .describe('The caller’s deadline, epoch milliseconds'),
  'X-Platform-Provider': z
    .enum(['anthropic', 'openai', 'google', 'ollama'])
    .optional()
    .describe('The LLM provider, among the agent’s supported_providers'),
  'X-Platform-Model': z.string().optional().describe('Overrides the model'),
  traceparent: z
    .string()
    .optional()
    .describe(
      'W3C trace context: the call joins this trace under this span (a malformed one starts a new trace; docs/traces.md)',
    ),
});

/** Streamed: the local server spools it to a temporary file, and multipart files go to disk. */
export const CALL_BODY = {
  maxBytes: MAX_CALL_BODY_BYTES,
  contentTypes: ['application/json', 'multipart/form-data'],
  stream: true as const,
  json: z.record(z.string(), z.unknown()).describe('A JSON object matching the agent’s input_schema'),
};
