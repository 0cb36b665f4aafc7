import * as z from 'zod';
import { MAX_PROMPT_TEMPLATE_BYTES, overBytes, utf8Bytes } from '../../shared/byte-limits.ts';
import { secretName } from '../secrets/secret-schemas.ts';
import { AGENT_TYPES, EXECUTION_ENGINES, ORCHESTRATION_MODES, RUN_MODES } from './agent-kinds.ts';
import {
  DEFAULT_MAX_TURNS,
  DEFAULT_PER_CALL_DOWNSTREAM_CAP,
  MAX_HOPS_LIMIT,
  MAX_PRICE_CREDITS,
  MAX_RUN_TIMEOUT_SECONDS,
  MAX_TIMEOUT_MS,
  MAX_TIMEOUT_SECONDS,
  MAX_TURNS_LIMIT,
} from './manifest-limits.ts';
import {
  AGENT_NAME_PATTERN,
  DEPENDENCY_ID_PATTERN,
  ENDPOINT_PATTERN,
  REGION_PATTERN,
  SKILL_REF_PATTERN,
  TOOL_NAME_PATTERN,
  VERSION_PIN_PATTERN,
} from './manifest-names.ts';

/*
 * The zod schema of agent.json's fields, one by one (types, lengths, patterns, defaults); the
 * rules that tie fields together are in manifest-rules.ts, and manifest.ts puts the two together.
 */

function isGitUrl(url: string): boolean {
  if (/\s/.test(url)) return false;
  if (/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$/.test(url)) return true; // scp-like git@host:org/repo
  try {
    const u = new URL(url);
    return ['https:', 'ssh:', 'git:', 'git+ssh:'].includes(u.protocol) && u.hostname !== '';
  } catch {
    return false;
  }
}

/** A token in a public manifest would leak: https://TOKEN@host/… and user:password@ are refused. */
function hasCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || (u.protocol === 'https:' && u.username !== '');
  } catch {
    return false;
  }
}

const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** The vCPUs a manifest's `sandbox.cpu` may ask for (Fargate's task sizes up to 4 vCPUs). */
export const SANDBOX_CPUS = [0.25, 0.5, 1, 2, 4] as const;

const int = (min: number, max: number, maxNote = '') =>
  z
    .number()
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}${maxNote}`);

export const agentNameSchema = z
  .string()
  .regex(
    AGENT_NAME_PATTERN,
    'must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit',
  );

export const descriptionSchema = text(2000);

// A JSON Schema object. Whether it compiles (ajv) is checked by the manifest parser (manifest.ts,
// checkJsonSchemas), not here: the route table documents these fields from this module, and every
// Lambda loads the route table, so importing ajv here would put it in every cold start.
const jsonSchemaField = z.record(z.string(), z.unknown(), 'must be a JSON Schema object');

const customToolSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1 to 64 letters, digits, underscores and hyphens'),
  description: text(2000),
  command: text(4096),
  input_schema: jsonSchemaField.optional(),
});

const dependencySchema = z.strictObject({
  id: z.string().regex(DEPENDENCY_ID_PATTERN, "must be 'org_slug/agent_name'"),
  version: z
    .string()
    .regex(
      VERSION_PIN_PATTERN,
      'must be an exact version pin such as v3 (ranges such as ^v1, v1.x, * and latest are not allowed)',
    ),
});

const orchestrationSchema = z.strictObject({
  manifest_version: z.literal(1, 'must be 1'),
  dependencies: z.array(dependencySchema).max(50, 'must have at most 50 items'),
  max_hops: int(0, MAX_HOPS_LIMIT, ' (platform maximum)'),
  timeout_ms: z
    .number()
    .int('must be an integer')
    .positive('must be a positive integer (milliseconds)')
    .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} (platform maximum of 300 s)`),
  per_call_downstream_cap: int(1, 1_000_000).default(DEFAULT_PER_CALL_DOWNSTREAM_CAP),
  orchestration_mode: z.enum(ORCHESTRATION_MODES, 'must be strict or flexible').optional(),
  min_required_hops: int(0, MAX_HOPS_LIMIT).optional(),
  region: z
    .string()
    .regex(REGION_PATTERN, 'must be 1 to 32 lowercase letters, digits and hyphens (such as eu-west-1)')
    .optional(),
  visibility: z.enum(['public', 'private'], 'must be public or private').optional(),
  recommended_min_caller_budget: int(0, 1_000_000).optional(),
});

export const baseSchema = z.strictObject({
  name: agentNameSchema,
  type: z
    .enum([...AGENT_TYPES, 'code', 'agentic'], 'must be prompt, tool, agent or skill (legacy: code, agentic)')
    .default('prompt'),
  description: descriptionSchema,
  supported_providers: z.array(z.string()).min(1, 'must list at least one provider'),
  /** Ignored (spec); parseManifest warns. */
  model: z.unknown().optional(),
  /** Derived; accepted only when equal to the derived engine, so a normalised manifest re-parses. */
  execution_engine: z
    .enum([...EXECUTION_ENGINES, 'none'], 'must be direct_llm, code_runtime or managed_loop')
    .optional(),

  run_mode: z.enum(RUN_MODES, 'must be on_demand or always_on').default('on_demand'),
  runtime: z.strictObject({ command: text(4096) }).optional(),
  loop: z
    .strictObject({
      max_turns: int(1, MAX_TURNS_LIMIT, ' (platform maximum)').default(DEFAULT_MAX_TURNS),
      secrets_in_sandbox: z
        .boolean()
        .optional()
        .describe(
          "Give the declared secrets to the loop's sandbox, where whoever calls the agent can read them through its tools (default false; docs/manifest.md)",
        ),
    })
    .optional(),
  callable: z.boolean().optional(),
  /** The file types a call may carry, as MIME patterns (core/calls/accepted-file-types.ts). */
  accepted_file_types: z
    .array(
      z
        .string()
        .toLowerCase()
        .regex(
          /^(\*\/\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126}))$/,
          'must be a MIME type or pattern such as application/pdf, image/* or */*',
        ),
    )
    .min(1, 'must list at least one type (omit the field to accept the default)')
    .max(50, 'must have at most 50 items')
    .optional(),

  default_endpoint: z
    .string()
    .regex(ENDPOINT_PATTERN, 'must be 1 to 64 lowercase letters, digits, hyphens and underscores')
    .default('run'),
  timeout_seconds: int(0, MAX_TIMEOUT_SECONDS, ' (platform maximum)').optional(),
  run_timeout_seconds: int(1, MAX_RUN_TIMEOUT_SECONDS, ' (platform maximum)')
    .optional()
    .describe(
      "How long a run of the agent (a call with Prefer: respond-async, or an MCP task) may last, in seconds; default timeout_seconds, within the caller's tier (docs/runs.md)",
    ),
  tags: z.array(text(50)).max(20, 'must have at most 20 items').default([]),
  is_public: z.boolean().optional(),
  default_models: z
    .record(z.string(), text(200), 'must be an object mapping provider to model id')
    .default({}),
  default_skills: z
    .array(z.string().regex(SKILL_REF_PATTERN, 'must be a skill ref such as org/skill or org/skill@v1'))
    .max(20, 'must have at most 20 items')
    .default([]),
  skills_locked: z.boolean().default(false),
  required_secrets: z.array(secretName).max(50, 'must have at most 50 items').default([]),
  optional_secrets: z.array(secretName).max(50, 'must have at most 50 items').default([]),

  // tool type
  entrypoint: text(1024)
    .refine(
      (p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'),
      'must be a relative path inside the bundle (no leading / and no ..)',
    )
    .optional(),
  source_url: text(2048)
    .refine(isGitUrl, 'must be a git URL (https://, ssh://, git:// or git@host:path)')
    .refine((u) => !hasCredentials(u), 'must not contain credentials (the manifest can be public)')
    .optional(),
  run_command: text(4096).optional(),
  /** What its sandbox needs (docs/manifest.md; within the publisher's tier: sandbox-size.ts). */
  sandbox: z
    .strictObject({
      cpu: z
        .number('must be a number of vCPUs')
        .refine(
          (v) => (SANDBOX_CPUS as readonly number[]).includes(v),
          'must be 0.25, 0.5, 1, 2 or 4 (vCPUs)',
        )
        .optional(),
      memory_mb: int(512, 30_720).optional(),
    })
    .refine((s) => s.cpu !== undefined || s.memory_mb !== undefined, 'must give cpu, memory_mb or both')
    .optional(),
  bundle: z
    .strictObject({
      exclude: z.array(text(256)).max(100, 'must have at most 100 items').default([]),
      include: z.array(text(256)).max(100, 'must have at most 100 items').default([]),
    })
    .optional(),

  // prompt type
  prompt_template: z
    .string()
    .refine((s) => s.trim() !== '', 'must not be empty')
    // In bytes, as DynamoDB counts it: 199,000 `€` are 597,000 bytes (shared/byte-limits.ts).
    .superRefine((s, ctx) => {
      const size = utf8Bytes(s);
      if (size > MAX_PROMPT_TEMPLATE_BYTES)
        ctx.addIssue({ code: 'custom', message: overBytes(MAX_PROMPT_TEMPLATE_BYTES, size, 'of text') });
    })
    .optional(),
  input_schema: jsonSchemaField.optional(),
  output_schema: jsonSchemaField.optional(),

  // agent type
  custom_tools: z.array(customToolSchema).max(50, 'must have at most 50 items').default([]),

  // orchestrators
  manifest: orchestrationSchema.optional(),

  // directory (agenthost)
  allow_local_download: z.boolean().default(false),
  price_credits: int(0, MAX_PRICE_CREDITS).default(0),
});

export type BaseManifest = z.output<typeof baseSchema>;
