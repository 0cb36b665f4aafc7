import * as z from 'zod';

/** Secrets are injected as environment variables: their names are env-var names. */
export const secretName = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(
    /^[A-Z_][A-Z0-9_]*$/,
    'must be an environment variable name: upper-case letters, digits and underscores, not starting with a digit',
  );

export const MAX_SECRET_BYTES = 64 * 1024;

export const secretPutBody = z.strictObject({
  name: secretName,
  value: z
    .string()
    .min(1, 'must not be empty')
    .refine(
      (v) => Buffer.byteLength(v, 'utf8') <= MAX_SECRET_BYTES,
      'must be at most 64 KB (65,536 bytes of UTF-8)',
    ),
});

export const secretParams = z.strictObject({
  workspace_id: z.string().min(1).max(100),
  name: secretName,
});

export const secretSchema = z.object({
  name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const secretPutResultSchema = secretSchema.extend({
  created: z.boolean().describe('true when the secret did not exist before'),
});

export const secretListSchema = z.object({ secrets: z.array(secretSchema) });

export type SecretRecord = z.infer<typeof secretSchema>;
