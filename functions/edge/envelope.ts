import * as z from 'zod';

export const metadataSchema = z.object({
  request_id: z.string(),
  /** A call's trace (docs/traces.md): on the answers of calls whose agent was found. */
  trace_id: z.string().optional(),
});

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    is_retryable: z.boolean(),
    suggested_wait_time: z.number().int().optional(),
    details: z
      .object({
        fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
      })
      .catchall(z.unknown())
      .optional(),
  }),
  metadata: metadataSchema,
});

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
