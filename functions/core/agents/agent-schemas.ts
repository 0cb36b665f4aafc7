import * as z from 'zod';
import {
  BUNDLE_LIMITS,
  GENERIC_CONTENT_TYPES,
  GZIP_CONTENT_TYPES,
  ZIP_CONTENT_TYPES,
} from '../../shared/bundle-limits.ts';
import { intParam } from '../../shared/query-params.ts';
import { AGENT_TYPES, EXECUTION_ENGINES } from './agent-kinds.ts';
import { baseSchema } from './manifest-fields.ts';

const boolParam = z
  .enum(['true', 'false'], 'must be true or false')
  .transform((v) => v === 'true')
  .optional();

export const manifestBody = z
  .looseObject({})
  .describe(
    'The manifest (agent.json; fields in docs/manifest.md), or {"type": "skill", "skill_md": "<SKILL.md text>"} for a skill',
  );

/** A skill published from its SKILL.md text. */
const skillMdBody = z.strictObject({ type: z.literal('skill'), skill_md: z.string() });

/**
 * What /openapi.json documents for POST /agents: the manifest's fields (manifest-fields.ts), or a
 * SKILL.md. manifestBody validates only that it is an object: publish.ts parses the rest, naming
 * each offending field.
 */
export const manifestDocument = z
  .union([baseSchema, skillMdBody])
  .describe(
    'The manifest (agent.json; fields in docs/manifest.md), or {"type": "skill", "skill_md": "<SKILL.md text>"} for a skill',
  );

export const publishQuery = z.strictObject({
  workspace_id: z
    .uuid()
    .optional()
    .describe('Publish into this workspace (owner role); default: the personal one'),
  allow_no_secrets: boolParam.describe(
    'Bypass: publish a tool or agent type without required_secrets (it declares that it needs none)',
  ),
});

export const agentListQuery = z.strictObject({
  workspace_id: z.uuid().optional(),
  name: z.string().min(1).max(64).optional(),
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const agentIdParams = z.strictObject({ id: z.string().min(1).max(100) });

export const agentPatchBody = z
  .looseObject({})
  .refine((b) => Object.keys(b).length > 0, 'must set at least one field')
  .describe(
    'Any mutable manifest fields; run_mode, runtime, loop, callable (and locked skills) need a new version',
  );

/** What /openapi.json documents for PATCH /agents/{id}: any manifest fields (authoring.ts refuses immutable ones). */
export const agentPatchDocument = baseSchema
  .partial()
  .describe(
    'Any mutable manifest fields; run_mode, runtime, loop, callable (and locked skills) need a new version',
  );

export const deleteQuery = z.strictObject({
  mode: z.enum(['version', 'all_versions']).default('version'),
  force: boolParam.describe('Delete even when other agents pin the version(s)'),
});

export const forkBody = z.strictObject({
  workspace_id: z.uuid().optional(),
  new_name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be an agent name: lowercase letters, digits and hyphens')
    .optional(),
  is_public: z
    .boolean()
    .optional()
    .describe('List the fork in the public directory; a fork is private unless this is true'),
});

export const publicListQuery = z.strictObject({
  q: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('Only agents whose org/name or description contains this text (case-insensitive)'),
  tag: z.string().min(1).max(64).optional(),
  type: z.enum(['prompt', 'tool', 'agent', 'skill']).optional(),
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const publicAgentParams = z.strictObject({
  org: z.string().min(1).max(64),
  agent: z.string().min(1).max(64),
  version: z.string().regex(/^v[1-9][0-9]*$/, 'must be a version such as v1'),
});

const agentType = z.enum(AGENT_TYPES);
const runMode = z.enum(['on_demand', 'always_on']);
/** A skill runs on no engine: `none`. */
const engine = z.enum([...EXECUTION_ENGINES, 'none']);

/** The stored manifest (normalised: every default filled in) as the API returns it. */
const manifestRecord = z
  .record(z.string(), z.unknown())
  .describe('The normalised manifest (docs/manifest.md)');

/** The agent record (agent-record.ts toRecord): the manifest's fields at the top level, and the version's. */
export const agentRecordSchema = z.looseObject({
  id: z.uuid(),
  org: z.string(),
  name: z.string(),
  version: z.string(),
  ref: z.string().describe('org/name/version'),
  workspace_id: z.string(),
  type: agentType,
  description: z.string(),
  run_mode: runMode,
  execution_engine: engine,
  callable: z.boolean(),
  status: z.enum(['active', 'deprecated', 'sunset', 'deleted']),
  paid: z.boolean(),
  source_available: z.boolean(),
  skill_files: z.record(z.string(), z.string()).nullable(),
  bundle: z
    .object({
      sha256: z.string(),
      size_bytes: z.number(),
      format: z.enum(['tar.gz', 'zip']),
      entries: z.number(),
      uploaded_at: z.string(),
    })
    .nullable(),
  published_by: z.string(),
  forked_from: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  deprecated_at: z.string().nullable(),
  sunset_at: z.string().nullable(),
  deleted_at: z.string().nullable(),
  warnings: z
    .array(z.object({ code: z.string(), field: z.string().optional(), message: z.string() }))
    .optional()
    .describe('On publish: fields that were ignored'),
});

export const agentListSchema = z.object({
  agents: z.array(agentRecordSchema),
  total: z.number().int(),
  next_offset: z
    .number()
    .int()
    .nullable()
    .describe(
      'Offset of the next page, null when this is the last; a page may hold fewer than `limit` agents when their manifests are large (docs/http.md "Pages")',
    ),
});

const deletionImpact = {
  dependents: z.array(z.string()).describe('Agent versions (org/name/version) that pin it'),
  schedules: z.array(z.string()).describe('Ids of its workspace’s schedules that run it'),
  services: z.array(z.string()).describe('Ids of its workspace’s services that run it'),
  can_delete: z.boolean(),
};

export const deleteCheckSchema = z.object({
  agent_id: z.string(),
  ref: z.string(),
  versions: z.array(z.string()),
  ...deletionImpact,
  confirmation: z.enum(['none', 'force=true']),
  all_versions: z.object({
    ...deletionImpact,
    confirmation: z.enum(['mode=all_versions', 'mode=all_versions&force=true']),
  }),
  retention_days: z.number().int(),
});

const publicSummary = {
  id: z.string().describe('The version’s id: what POST /agents/{id}/fork takes'),
  org: z.string(),
  name: z.string(),
  version: z.string(),
  ref: z.string(),
  type: agentType,
  description: z.string(),
  tags: z.array(z.string()),
  run_mode: runMode,
  execution_engine: engine,
  callable: z.boolean(),
  paid: z.boolean(),
  price_credits: z.number(),
  source_available: z.boolean(),
};

export const publicAgentListSchema = z.object({
  agents: z.array(z.object(publicSummary)),
  total: z.number().int(),
});

const userSchema = z.record(z.string(), z.unknown()).nullable();

export const publicAgentDetailsSchema = z.object({
  ...publicSummary,
  input_schema: userSchema,
  output_schema: userSchema,
  supported_providers: z.array(z.string()),
  default_endpoint: z.string(),
  deprecated_at: z.string().nullable(),
  sunset_at: z.string().nullable(),
  prompt_template: z.string().nullable().optional().describe('Source-available agents only'),
  manifest: manifestRecord.optional().describe('Source-available agents only'),
  skill_files: z
    .record(z.string(), z.string())
    .nullable()
    .optional()
    .describe('Source-available agents only'),
});

export const publicDownloadSchema = z.object({
  type: agentType,
  name: z.string(),
  org: z.string(),
  version: z.string(),
  description: z.string(),
  run_mode: runMode,
  execution_engine: engine,
  callable: z.boolean(),
  source_url: z.string().nullable(),
  runtime: z.object({ command: z.string() }).nullable(),
  prompt_template: z.string().nullable(),
  input_schema: userSchema,
  output_schema: userSchema,
  manifest: manifestRecord,
  skill_files: z.record(z.string(), z.string()).nullable(),
  bundle: z
    .object({
      url: z.string(),
      expires_in: z.number().int(),
      sha256: z.string(),
      format: z.enum(['tar.gz', 'zip']),
      size_bytes: z.number(),
    })
    .nullable(),
});

export const BUNDLE_UPLOAD = {
  maxBytes: BUNDLE_LIMITS.maxArchiveBytes,
  contentTypes: [...GZIP_CONTENT_TYPES, ...ZIP_CONTENT_TYPES, ...GENERIC_CONTENT_TYPES],
};
