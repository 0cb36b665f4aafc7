import * as z from 'zod';

const agentName = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/,
    'must be an agent name: lowercase letters, digits and hyphens',
  );

export const apiKeyCreateBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100).optional().describe('A label for the key'),
  agent: agentName
    .optional()
    .describe('Marks the key as an agent’s: tasks created with it record this name as created_by'),
});

export const apiKeyIdParams = z.strictObject({ id: z.string().min(1).max(100) });

export const apiKeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().describe('The first characters of the key, for recognising it'),
  agent: z.string().nullable(),
  created_at: z.string(),
});

export const apiKeyCreatedSchema = apiKeySchema.extend({
  api_key: z.string().describe('The key itself. Shown only in this response; store it now.'),
});

export const apiKeyListSchema = z.object({ api_keys: z.array(apiKeySchema) });
