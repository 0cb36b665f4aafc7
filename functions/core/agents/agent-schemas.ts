import * as z from 'zod';
import {
  BUNDLE_LIMITS,
  GENERIC_CONTENT_TYPES,
  GZIP_CONTENT_TYPES,
  ZIP_CONTENT_TYPES,
} from '../../shared/bundle-limits.ts';
import { intParam } from '../../shared/query-params.ts';

const boolParam = z
  .enum(['true', 'false'], 'must be true or false')
  .transform((v) => v === 'true')
  .optional();

export const manifestBody = z
  .looseObject({})
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

export const deleteQuery = z.strictObject({
  mode: z.enum(['version', 'all_versions']).default('version'),
  force: boolParam.describe('Delete even when other agents pin the version(s)'),
});

export const logsQuery = z.strictObject({ limit: intParam(1, 1000).default(100) });

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

export const agentRecordSchema = z.looseObject({
  id: z.uuid(),
  org: z.string(),
  name: z.string(),
  version: z.string(),
  type: z.enum(['prompt', 'tool', 'agent', 'skill']),
  run_mode: z.enum(['on_demand', 'always_on']),
  execution_engine: z.string(),
  callable: z.boolean(),
  status: z.enum(['active', 'deprecated', 'sunset', 'deleted']),
  deprecated_at: z.string().nullable(),
  sunset_at: z.string().nullable(),
});

export const agentListSchema = z.object({ agents: z.array(agentRecordSchema), total: z.number().int() });
export const anyObject = z.looseObject({});

export const BUNDLE_UPLOAD = {
  maxBytes: BUNDLE_LIMITS.maxArchiveBytes,
  contentTypes: [...GZIP_CONTENT_TYPES, ...ZIP_CONTENT_TYPES, ...GENERIC_CONTENT_TYPES],
};
