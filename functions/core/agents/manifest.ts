import { createHash } from 'node:crypto';
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as z from 'zod';
import type { FieldIssue } from '../../shared/errors.ts';
import { secretName } from '../secrets/secret-schemas.ts';
import { isLinearPattern, linearRegExp, UnsupportedPatternError } from './linear-regexp.ts';
import { placeholders } from './placeholders.ts';
import { LLM_PROVIDERS, LOCAL_PROVIDER, PROVIDERS } from './providers.ts';

/**
 * The agent manifest (agent.json): one zod schema that checks every field, the rules that tie
 * fields together, and the users' JSON Schemas (ajv), then normalises the manifest (canonical
 * type, derived execution engine, every default filled in). docs/manifest.md is the reference;
 * decisions where the spec is silent are marked there.
 */

export const AGENT_TYPES = ['prompt', 'tool', 'agent', 'skill'] as const;
export const LEGACY_TYPES = { code: 'tool', agentic: 'agent' } as const;
export const EXECUTION_ENGINES = ['direct_llm', 'code_runtime', 'managed_loop'] as const;
export const RUN_MODES = ['on_demand', 'always_on'] as const;
export const ORCHESTRATION_MODES = ['strict', 'flexible'] as const;
export const BUILT_IN_TOOLS = ['bash', 'read_file', 'write_file', 'list_files', 'submit_result'] as const;

export type AgentType = (typeof AGENT_TYPES)[number];
/** `none` is ours: skills are attached to other agents' calls and never run on their own. */
export type ExecutionEngine = (typeof EXECUTION_ENGINES)[number] | 'none';
export type RunMode = (typeof RUN_MODES)[number];

export const DEFAULT_TIMEOUT_SECONDS = 300;
export const MAX_TIMEOUT_SECONDS = 300;
export const DEFAULT_MAX_TURNS = 25;
export const MAX_TURNS_LIMIT = 50;
export const MAX_HOPS_LIMIT = 10;
export const MAX_TIMEOUT_MS = MAX_TIMEOUT_SECONDS * 1000;
export const DEFAULT_PER_CALL_DOWNSTREAM_CAP = 50;
export const MAX_PRICE_CREDITS = 10_000;
export const MAX_SCHEMA_CHARS = 64 * 1024;
/** Injected automatically into agents with dependencies; a manifest must not list it. */
export const SERVICE_KEY_SECRET = 'PLATFORM_SERVICE_KEY';

/** Agent (and skill) names: the {agent} segment of /{org}/{agent}/{version}/{endpoint}. */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
const ORG = '[a-z0-9][a-z0-9-]{0,37}[a-z0-9]'; // org slugs: 2-39 characters (functions/core/accounts/slug.ts)
const NAME = '[a-z0-9][a-z0-9-]{0,63}';
export const DEPENDENCY_ID_PATTERN = new RegExp(`^${ORG}/${NAME}$`);
export const SKILL_REF_PATTERN = new RegExp(`^${ORG}/${NAME}(?:@v[1-9][0-9]*)?$`);
export const VERSION_PIN_PATTERN = /^v[1-9][0-9]*$/;
/** The providers' tool-name rule (Anthropic and OpenAI both allow exactly this). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const ENDPOINT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;

export interface Warning {
  code: string;
  field?: string;
  message: string;
}

// ---------------------------------------------------------------------------------------------
// Helpers

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Property names a JSON Schema declares at its top level, including allOf/anyOf/oneOf members. */
export function schemaProperties(schema: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  const add = (s: unknown) => {
    if (isRecord(s) && isRecord(s.properties)) for (const k of Object.keys(s.properties)) names.add(k);
  };
  add(schema);
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach(add);
  }
  return names;
}

export function canonicalType(type: unknown): AgentType | undefined {
  if (typeof type !== 'string') return undefined;
  if (type === 'code' || type === 'agentic') return LEGACY_TYPES[type];
  return (AGENT_TYPES as readonly string[]).includes(type) ? (type as AgentType) : undefined;
}

/** Spec: defaults by type; a runtime object forces code_runtime, a loop object managed_loop. */
export function deriveEngine(type: AgentType, hasRuntime: boolean, hasLoop: boolean): ExecutionEngine {
  if (type === 'skill') return 'none';
  if (hasRuntime) return 'code_runtime';
  if (hasLoop) return 'managed_loop';
  return type === 'tool' ? 'code_runtime' : type === 'agent' ? 'managed_loop' : 'direct_llm';
}

/** Prefix the (manifest-relative) fields of issues: prefixIssues('body.manifest', issues). */
export function prefixIssues(prefix: string, issues: FieldIssue[]): FieldIssue[] {
  return issues.map((i) => ({ ...i, field: i.field ? `${prefix}.${i.field}` : prefix }));
}

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

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------
// Users' JSON Schemas: ajv (draft 2020-12), compiled once per distinct schema and cached.

const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const MAX_CACHED_VALIDATORS = 500;
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
let ajvInstance: InstanceType<typeof Ajv2020> | undefined;
const validatorCache = new Map<string, ValidateFunction>();

function ajv(): InstanceType<typeof Ajv2020> {
  if (!ajvInstance) {
    // strictSchema refuses unknown keywords and formats (a typo such as "requried" would
    // otherwise validate nothing); strictTypes and friends only nag about valid schemas.
    ajvInstance = new Ajv2020({
      allErrors: true,
      strictSchema: true,
      strictNumbers: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      logger: false,
      // Users' patterns run on RE2 (linear time): see linear-regexp.ts.
      code: { regExp: linearRegExp },
    });
    addFormats(ajvInstance);
    ajvInstance.addFormat('regex', isLinearPattern); // ajv-formats' own check compiles with RegExp
    ajvInstance.addKeyword('example'); // OpenAPI's annotation, common in hand-written schemas
  }
  return ajvInstance;
}

export type SchemaCompileResult = { ok: true; validate: ValidateFunction } | { ok: false; errors: string[] };

/**
 * Compile a user's JSON Schema, or say why it is not one. Successes are cached by the schema's
 * JSON text, so equal schemas share one validator. Each schema is compiled in isolation: the
 * ids it registers in the shared ajv instance are removed again, so one agent's schema can never
 * $ref another's.
 */
export function compileJsonSchema(schema: Record<string, unknown>): SchemaCompileResult {
  const json = JSON.stringify(schema);
  const key = createHash('sha256').update(json).digest('base64url');
  const hit = validatorCache.get(key);
  if (hit) {
    validatorCache.delete(key); // least recently used goes first
    validatorCache.set(key, hit);
    return { ok: true, validate: hit };
  }
  if (json.length > MAX_SCHEMA_CHARS) {
    return { ok: false, errors: [`must be at most ${MAX_SCHEMA_CHARS} characters as JSON`] };
  }
  const dialect = schema.$schema;
  if (dialect !== undefined && dialect !== SCHEMA_DIALECT && dialect !== `${SCHEMA_DIALECT}#`) {
    return {
      ok: false,
      errors: [`only JSON Schema draft 2020-12 is supported: $schema must be ${SCHEMA_DIALECT} or omitted`],
    };
  }
  const a = ajv();
  if (!a.validateSchema(schema)) {
    const seen = new Set<string>();
    const errors: string[] = [];
    for (const e of a.errors ?? []) {
      const at = e.instancePath || '/';
      if (seen.has(at)) continue;
      seen.add(at);
      errors.push(`${at} ${e.message ?? 'is invalid'}`);
    }
    return { ok: false, errors: errors.slice(0, 3) };
  }
  const copy = JSON.parse(json) as Record<string, unknown>; // later changes to the caller's object don't reach the cache
  const refsBefore = new Set(Object.keys(a.refs));
  const schemasBefore = new Set(Object.keys(a.schemas));
  let validate: ValidateFunction;
  try {
    validate = a.compile(copy);
  } catch (err) {
    if (err instanceof UnsupportedPatternError) return { ok: false, errors: [err.message] };
    const message = (err as Error).message.replace(
      /^unknown format "(.*)" ignored in schema at path "(.*)"$/,
      'unknown format "$1" at $2',
    );
    return { ok: false, errors: [message] };
  } finally {
    a.removeSchema(copy);
    for (const k of Object.keys(a.refs)) if (!refsBefore.has(k)) delete a.refs[k];
    for (const k of Object.keys(a.schemas)) if (!schemasBefore.has(k)) delete a.schemas[k];
  }
  validatorCache.set(key, validate);
  if (validatorCache.size > MAX_CACHED_VALIDATORS) {
    validatorCache.delete(validatorCache.keys().next().value!);
  }
  return { ok: true, validate };
}

/**
 * The cached validator for an agent's input (or output) schema; equal schemas give the same
 * function. Throws on a schema that does not compile (a published manifest's schemas always do).
 */
export function compileInputValidator(schema: Record<string, unknown>): ValidateFunction {
  const result = compileJsonSchema(schema);
  if (!result.ok) throw new Error(`Invalid JSON Schema: ${result.errors.join('; ')}`);
  return result.validate;
}

// ---------------------------------------------------------------------------------------------
// Field schemas

const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

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

const jsonSchemaField = z
  .record(z.string(), z.unknown(), 'must be a JSON Schema object')
  .superRefine((s, ctx) => {
    const result = compileJsonSchema(s);
    if (!result.ok) {
      for (const e of result.errors)
        ctx.addIssue({ code: 'custom', message: `is not a valid JSON Schema: ${e}` });
    }
  });

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

const baseSchema = z.strictObject({
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
    .strictObject({ max_turns: int(1, MAX_TURNS_LIMIT, ' (platform maximum)').default(DEFAULT_MAX_TURNS) })
    .optional(),
  callable: z.boolean().optional(),

  default_endpoint: z
    .string()
    .regex(ENDPOINT_PATTERN, 'must be 1 to 64 lowercase letters, digits, hyphens and underscores')
    .default('run'),
  timeout_seconds: int(0, MAX_TIMEOUT_SECONDS, ' (platform maximum)').optional(),
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
  bundle: z
    .strictObject({
      exclude: z.array(text(256)).max(100, 'must have at most 100 items').default([]),
      include: z.array(text(256)).max(100, 'must have at most 100 items').default([]),
    })
    .optional(),

  // prompt type
  prompt_template: z
    .string()
    .max(200_000, 'must be at most 200000 characters')
    .refine((s) => s.trim() !== '', 'must not be empty')
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

type BaseManifest = z.output<typeof baseSchema>;

// ---------------------------------------------------------------------------------------------
// Rules across fields. They run even when single fields failed, so every issue is reported at
// once; hence they read the value defensively.

interface RuleOptions {
  allowNoSecrets: boolean;
}

function checkRules(
  m: Record<string, unknown>,
  add: (field: string, message: string) => void,
  opts: RuleOptions,
) {
  const type = canonicalType(m.type);
  const hasRuntime = isRecord(m.runtime);
  const hasLoop = isRecord(m.loop);
  // With both runtime and loop the engine is unknown; rules that depend on it stay quiet.
  const engine = type && !(hasRuntime && hasLoop) ? deriveEngine(type, hasRuntime, hasLoop) : undefined;
  const runMode = m.run_mode;
  const tools = Array.isArray(m.custom_tools) ? m.custom_tools : [];
  const orchestration = isRecord(m.manifest) ? m.manifest : undefined;
  const dependencies =
    orchestration && Array.isArray(orchestration.dependencies) ? orchestration.dependencies : [];

  if (hasRuntime && hasLoop) add('runtime', 'runtime and loop are mutually exclusive');

  if (type === 'skill') {
    const why = 'is not allowed for skills (a skill is a prompt fragment and does not run)';
    if (hasRuntime) add('runtime', why);
    if (hasLoop) add('loop', why);
    if (runMode === 'always_on')
      add('run_mode', 'always_on is not allowed for skills (a skill does not run)');
    if (orchestration) add('manifest', why);
    if (m.callable === true)
      add('callable', 'must be false for skills (skills are attached to calls, not called)');
  } else if (runMode === 'always_on' && engine) {
    const runs = engine === 'managed_loop' || (engine === 'code_runtime' && hasRuntime);
    if (!runs) add('run_mode', 'always_on requires runtime.command or loop (not direct_llm)');
  }

  if (typeof m.execution_engine === 'string' && engine && m.execution_engine !== engine) {
    add('execution_engine', `is derived from type, runtime and loop (here ${engine}); omit it`);
  }

  if (typeof m.timeout_seconds === 'number') {
    if (runMode === 'on_demand' && m.timeout_seconds === 0) {
      add('timeout_seconds', 'must be at least 1 for on-demand agents (0 is for always-on agents)');
    }
    if (runMode === 'always_on' && m.timeout_seconds !== 0) {
      add('timeout_seconds', 'must be 0 for always-on agents (they have no request timeout)');
    }
  }

  // supported_providers
  const providers = Array.isArray(m.supported_providers) ? m.supported_providers : [];
  const anthropicOnly = type === 'agent' || engine === 'managed_loop';
  const seenProviders = new Set<unknown>();
  providers.forEach((p, i) => {
    const at = `supported_providers.${i}`;
    if (typeof p !== 'string') return;
    if (p === LOCAL_PROVIDER) {
      add(
        at,
        `${LOCAL_PROVIDER} is the local-model provider and cannot be listed; use anthropic, openai, google or any`,
      );
    } else if (p !== 'any' && !(LLM_PROVIDERS as readonly string[]).includes(p)) {
      add(at, 'must be anthropic, openai, google or any');
    } else if (seenProviders.has(p)) {
      add(at, `${p} is listed twice`);
    } else if (anthropicOnly && p !== 'anthropic') {
      add(at, 'agent-type (managed-loop) agents may list only anthropic');
    }
    seenProviders.add(p);
  });
  if (seenProviders.has('any') && providers.length > 1) {
    add('supported_providers', 'any must be the only value when given');
  }

  // default_models
  if (isRecord(m.default_models)) {
    const listed = providers.filter((p): p is string => typeof p === 'string');
    for (const key of Object.keys(m.default_models)) {
      if (!(PROVIDERS as readonly string[]).includes(key)) {
        add(`default_models.${key}`, `is not a provider (${PROVIDERS.join(', ')})`);
      } else if (
        key !== LOCAL_PROVIDER &&
        listed.length > 0 &&
        !listed.includes('any') &&
        !listed.includes(key)
      ) {
        add(`default_models.${key}`, `${key} is not in supported_providers`);
      }
    }
  }

  // secrets
  const required = Array.isArray(m.required_secrets) ? m.required_secrets : [];
  for (const list of ['required_secrets', 'optional_secrets'] as const) {
    const names = Array.isArray(m[list]) ? (m[list] as unknown[]) : [];
    const seen = new Set<unknown>();
    names.forEach((n, i) => {
      if (n === SERVICE_KEY_SECRET) {
        add(
          `${list}.${i}`,
          `${SERVICE_KEY_SECRET} must not be listed: it is injected automatically for agents with dependencies, and listing it breaks orchestration`,
        );
      } else if (seen.has(n)) {
        add(`${list}.${i}`, `${String(n)} is listed twice`);
      } else if (list === 'optional_secrets' && required.includes(n)) {
        add(`${list}.${i}`, `${String(n)} is already in required_secrets`);
      }
      seen.add(n);
    });
  }
  if ((type === 'tool' || type === 'agent') && required.length === 0 && !opts.allowNoSecrets) {
    add(
      'required_secrets',
      `must be declared (non-empty) for ${type} types; publish with the no-secrets bypass if the agent needs none`,
    );
  }

  // price and download
  if (typeof m.price_credits === 'number' && m.price_credits > 0 && m.allow_local_download === true) {
    add(
      'allow_local_download',
      'must be false for paid agents (price_credits > 0): paid agents are server-only',
    );
  }

  // prompt_template placeholders
  if (typeof m.prompt_template === 'string' && isRecord(m.input_schema)) {
    const props = schemaProperties(m.input_schema);
    for (const p of placeholders(m.prompt_template)) {
      if (!props.has(p)) add('prompt_template', `{{${p}}} is not a property of input_schema`);
    }
  }

  // custom_tools
  if (tools.length > 0 && engine && engine !== 'managed_loop') {
    add('custom_tools', 'are used only by managed-loop agents (type agent or a loop object)');
  }
  const toolNames = new Map<string, number>();
  tools.forEach((tool, i) => {
    if (!isRecord(tool)) return;
    const { name, command } = tool;
    if (typeof name === 'string') {
      if ((BUILT_IN_TOOLS as readonly string[]).includes(name)) {
        add(`custom_tools.${i}.name`, `${name} is a built-in tool name and cannot be reused`);
      } else if (toolNames.has(name)) {
        add(`custom_tools.${i}.name`, `${name} duplicates custom_tools.${toolNames.get(name)}.name`);
      } else {
        toolNames.set(name, i);
      }
    }
    if (typeof command !== 'string') return;
    const params = placeholders(command);
    if (params.length === 0) return;
    if (tool.input_schema === undefined) {
      add(
        `custom_tools.${i}.input_schema`,
        `is required when the command has placeholders (${params.map((p) => `{{${p}}}`).join(', ')})`,
      );
    } else if (isRecord(tool.input_schema)) {
      const props = schemaProperties(tool.input_schema);
      for (const p of params) {
        if (!props.has(p))
          add(`custom_tools.${i}.command`, `placeholder {{${p}}} is not a property of input_schema`);
      }
    }
  });

  // orchestration
  if (orchestration) {
    const seenIds = new Map<string, number>();
    dependencies.forEach((d, i) => {
      if (!isRecord(d) || typeof d.id !== 'string') return;
      const first = seenIds.get(d.id);
      if (first !== undefined)
        add(`manifest.dependencies.${i}.id`, `duplicates manifest.dependencies.${first}.id`);
      else seenIds.set(d.id, i);
    });
    const { max_hops: maxHops, min_required_hops: minHops } = orchestration;
    if (dependencies.length > 0 && typeof maxHops === 'number' && maxHops < 1) {
      add('manifest.max_hops', 'must be at least 1 when dependencies are declared');
    }
    if (typeof minHops === 'number' && typeof maxHops === 'number' && minHops > maxHops) {
      add('manifest.min_required_hops', 'must not exceed max_hops');
    }
    const visibility = orchestration.visibility;
    if (
      typeof visibility === 'string' &&
      typeof m.is_public === 'boolean' &&
      (visibility === 'public') !== m.is_public
    ) {
      add('manifest.visibility', `${visibility} contradicts is_public: ${m.is_public}`);
    }
    if (dependencies.length > 0 && engine && engine !== 'managed_loop') {
      add(
        'manifest.dependencies',
        'only managed-loop agents (type agent or a loop object) may declare dependencies',
      );
    } else if (dependencies.length > 0 && engine === 'managed_loop') {
      checkDependencyTools(dependencies, tools, add);
    }
  }
}

/**
 * Our reading of "matching custom_tools": every dependency needs a custom tool whose command
 * names the dependency's id (org/agent, not as part of a longer name), and a command that names
 * a version of a dependency (org/agent/vN or org/agent@vN) must name the pinned one.
 */
function checkDependencyTools(
  dependencies: unknown[],
  tools: unknown[],
  add: (field: string, message: string) => void,
) {
  dependencies.forEach((d, i) => {
    if (!isRecord(d) || typeof d.id !== 'string' || !DEPENDENCY_ID_PATTERN.test(d.id)) return;
    const id = escapeRegExp(d.id);
    const mention = new RegExp(`(?:^|[^A-Za-z0-9_-])${id}(?![A-Za-z0-9_-])`);
    const versioned = new RegExp(`(?:^|[^A-Za-z0-9_-])${id}[/@](v[0-9]+)(?![A-Za-z0-9_-])`, 'g');
    let matched = false;
    tools.forEach((tool, k) => {
      if (!isRecord(tool) || typeof tool.command !== 'string' || !mention.test(tool.command)) return;
      matched = true;
      if (typeof d.version !== 'string') return;
      for (const m of tool.command.matchAll(versioned)) {
        if (m[1] !== d.version) {
          add(
            `custom_tools.${k}.command`,
            `calls ${d.id} ${m[1]} but manifest.dependencies pins ${d.version}`,
          );
        }
      }
    });
    if (!matched) {
      add(
        `manifest.dependencies.${i}`,
        `has no matching custom tool (a custom tool whose command calls ${d.id})`,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Normalisation

function normalise(m: BaseManifest) {
  const type = canonicalType(m.type)!;
  const engine = deriveEngine(type, m.runtime !== undefined, m.loop !== undefined);
  const alwaysOn = m.run_mode === 'always_on';
  const orchestration = m.manifest;
  const hasDependencies = (orchestration?.dependencies.length ?? 0) > 0;
  return {
    name: m.name,
    type,
    description: m.description,
    supported_providers: m.supported_providers as Array<(typeof LLM_PROVIDERS)[number] | 'any'>,
    execution_engine: engine,
    run_mode: m.run_mode,
    callable: m.callable ?? type !== 'skill',
    ...(m.runtime ? { runtime: m.runtime } : {}),
    ...(engine === 'managed_loop' ? { loop: m.loop ?? { max_turns: DEFAULT_MAX_TURNS } } : {}),
    default_endpoint: m.default_endpoint,
    timeout_seconds: m.timeout_seconds ?? (alwaysOn ? 0 : DEFAULT_TIMEOUT_SECONDS),
    tags: [...new Set(m.tags)],
    is_public: m.is_public ?? orchestration?.visibility === 'public',
    default_models: m.default_models as Partial<Record<(typeof PROVIDERS)[number], string>>,
    default_skills: m.default_skills,
    skills_locked: m.skills_locked,
    required_secrets: m.required_secrets,
    optional_secrets: m.optional_secrets,
    ...(m.entrypoint !== undefined ? { entrypoint: m.entrypoint } : {}),
    ...(m.source_url !== undefined ? { source_url: m.source_url } : {}),
    ...(m.run_command !== undefined ? { run_command: m.run_command } : {}),
    ...(m.bundle !== undefined ? { bundle: m.bundle } : {}),
    ...(m.prompt_template !== undefined ? { prompt_template: m.prompt_template } : {}),
    ...(m.input_schema !== undefined ? { input_schema: m.input_schema } : {}),
    ...(m.output_schema !== undefined ? { output_schema: m.output_schema } : {}),
    custom_tools: m.custom_tools,
    ...(orchestration
      ? {
          manifest: {
            ...orchestration,
            ...(hasDependencies && !orchestration.orchestration_mode
              ? { orchestration_mode: 'strict' as const }
              : {}),
          },
        }
      : {}),
    allow_local_download: m.allow_local_download,
    price_credits: m.price_credits,
  };
}

// ---------------------------------------------------------------------------------------------
// The schema and the parser

const always = { when: () => true };

export function buildManifestSchema(opts: Partial<RuleOptions> = {}) {
  const ruleOptions: RuleOptions = { allowNoSecrets: opts.allowNoSecrets ?? false };
  return baseSchema
    .superRefine((value, ctx) => {
      if (!isRecord(value)) return;
      checkRules(
        value,
        (field, message) => ctx.addIssue({ code: 'custom', path: field.split('.'), message }),
        ruleOptions,
      );
    }, always)
    .transform(normalise);
}

/** The manifest file's schema (secrets required for tool and agent types). */
export const manifestSchema = buildManifestSchema();
const manifestSchemaNoSecrets = buildManifestSchema({ allowNoSecrets: true });

export type Manifest = z.output<typeof manifestSchema>;
export type ManifestInput = z.input<typeof manifestSchema>;
export type CustomTool = Manifest['custom_tools'][number];
export type Dependency = NonNullable<Manifest['manifest']>['dependencies'][number];

export type ParseManifestResult =
  | { ok: true; manifest: Manifest; warnings: Warning[] }
  | { ok: false; issues: FieldIssue[] };

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/** Friendlier default messages than zod's, for issues whose schema gives none. */
function errorMap(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return 'is required';
    return `must be ${ARTICLE[issue.expected] ?? issue.expected}`;
  }
  return undefined;
}

function toFieldIssues(issues: z.core.$ZodIssue[]): FieldIssue[] {
  const out: FieldIssue[] = [];
  const seen = new Set<string>();
  const push = (field: string, message: string) => {
    const k = `${field}\u0000${message}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push({ field, message });
    }
  };
  for (const issue of issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const field = path ? `${path}.${key}` : key;
        if (path) push(field, `is not a field of ${path}`);
        else if (key === 'version')
          push(field, 'is not a manifest field: versions are assigned on publish (v1, v2, ...)');
        else push(field, 'is not a manifest field');
      }
    } else {
      push(path, issue.message);
    }
  }
  return out;
}

/**
 * Validate and normalise an agent manifest. Every issue is reported, each with the dotted path
 * of its field inside the manifest (prefixIssues adds where the manifest came from).
 */
export function parseManifest(
  input: unknown,
  options: { allowNoSecrets?: boolean } = {},
): ParseManifestResult {
  if (!isRecord(input)) return { ok: false, issues: [{ field: '', message: 'must be a JSON object' }] };
  const schema = options.allowNoSecrets ? manifestSchemaNoSecrets : manifestSchema;
  const result = schema.safeParse(input, { error: errorMap });
  if (!result.success) return { ok: false, issues: toFieldIssues(result.error.issues) };
  const warnings: Warning[] = [];
  if ('model' in input) {
    warnings.push({ code: 'DEPRECATED_FIELD', field: 'model', message: 'ignored; use default_models' });
  }
  return { ok: true, manifest: result.data, warnings };
}
