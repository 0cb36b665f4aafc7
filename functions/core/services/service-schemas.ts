import * as z from 'zod';
import { MAX_SERVICE_ENV_BYTES, overBytes, utf8Bytes } from '../../shared/byte-limits.ts';
import { intParam } from '../../shared/query-params.ts';
import { nextOffsetSchema } from '../payloads/answer-page.ts';

const envVars = z
  .record(z.string().max(128), z.string().max(32_768))
  .refine((e) => Object.keys(e).length <= 100, 'at most 100 variables')
  // All of it travels in the ECS task definition, which AWS refuses over 64 KiB; the same limit
  // locally, so a service that runs here deploys there (shared/byte-limits.ts).
  .superRefine((e, ctx) => {
    // A value over its own limit is already the one field named.
    if (Object.values(e).some((v) => v.length > 32_768)) return;
    const size = Object.entries(e).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
    if (size > MAX_SERVICE_ENV_BYTES)
      ctx.addIssue({
        code: 'custom',
        message: overBytes(MAX_SERVICE_ENV_BYTES, size, 'of names and values'),
      });
  });
const secretNames = z
  .array(z.string().regex(/^[A-Z][A-Z0-9_]{0,127}$/, 'must be a secret name such as OPENAI_API_KEY'))
  .max(50);

export const MAX_RESTART_FAILURES_DEFAULT = 6;

export const serviceDeployBody = z.strictObject({
  agent: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9][a-z0-9-]{0,63}(@v[1-9][0-9]{0,5})?$/,
      'must be org/agent or org/agent@vN',
    ),
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lowercase letters, digits and hyphens (up to 63)')
    .optional()
    .describe('Unique in the workspace; default: the agent’s name'),
  command: z.string().min(1).max(4096).optional().describe('Entrypoint override'),
  env: envVars.default({}),
  secrets: secretNames.default([]).describe('Extra secret names, beyond the agent’s required_secrets'),
  min_instances: z.number().int().min(1).max(100).default(1),
  max_instances: z.number().int().min(1).max(100).optional(),
  auto_update: z.boolean().optional().describe('Default true unless a version is pinned'),
  http: z.boolean().default(true).describe('false: the app only makes outbound connections'),
  alert_webhook_url: z.url().max(2048).nullable().optional(),
  max_restart_failures: z.number().int().min(2).max(100).default(MAX_RESTART_FAILURES_DEFAULT),
});

export const servicePatchBody = z
  .strictObject({
    command: z.string().min(1).max(4096).nullable().optional(),
    env: envVars.optional().describe('Replaces the whole set'),
    secrets: secretNames.optional().describe('Replaces the whole set of extra secret names'),
    min_instances: z.number().int().min(1).max(100).optional(),
    max_instances: z.number().int().min(1).max(100).optional(),
    auto_update: z.boolean().optional(),
    alert_webhook_url: z.url().max(2048).nullable().optional(),
    max_restart_failures: z.number().int().min(2).max(100).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'must set at least one field');

export const serviceUpdateBody = z.strictObject({
  version: z
    .string()
    .regex(/^v[1-9][0-9]{0,5}$/, 'must be a version such as v3')
    .optional()
    .describe('Default: the newest version'),
});

export const serviceParams = z.strictObject({
  workspace_id: z.string().min(1).max(100),
  service_id: z.string().min(1).max(100),
});

export const serviceListQuery = z.strictObject({
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const serviceSchema = z.looseObject({
  id: z.uuid(),
  name: z.string(),
  agent: z.string(),
  agent_version: z.string(),
  state: z.enum(['provisioning', 'running', 'paused']),
  health_status: z.string(),
  url: z.string().nullable(),
});

export const serviceListSchema = z.object({
  services: z.array(serviceSchema),
  total: z.number().int(),
  next_offset: nextOffsetSchema,
});

export type ServiceDeployInput = z.infer<typeof serviceDeployBody>;
export type ServicePatchInput = z.infer<typeof servicePatchBody>;
export type ServiceUpdateInput = z.infer<typeof serviceUpdateBody>;
export type ServiceListQuery = z.infer<typeof serviceListQuery>;
