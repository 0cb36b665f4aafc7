import type * as z from 'zod';
import { jsonBytes, MAX_MANIFEST_BYTES, overBytes } from '../../shared/byte-limits.ts';
import type { FieldIssue } from '../../shared/errors.ts';
import { isRecord } from '../../shared/is-record.ts';
import { canonicalType, deriveEngine } from './agent-kinds.ts';
import { type BaseManifest, baseSchema } from './manifest-fields.ts';
import { DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_SECONDS } from './manifest-limits.ts';
import { type AddIssue, checkRules, type RuleOptions } from './manifest-rules.ts';
import type { LLM_PROVIDERS, PROVIDERS } from './providers.ts';
import { compileJsonSchema } from './user-schema.ts';

/**
 * The agent manifest (agent.json): one zod schema that checks every field (manifest-fields.ts),
 * the rules that tie fields together (manifest-rules.ts), and the users' JSON Schemas (ajv,
 * user-schema.ts), then normalises the manifest (canonical type, derived execution engine, every
 * default filled in). docs/manifest.md is the reference; decisions where the spec is silent are
 * marked there.
 */

export interface Warning {
  code: string;
  field?: string;
  message: string;
}

/** Prefix the (manifest-relative) fields of issues: prefixIssues('body.manifest', issues). */
export function prefixIssues(prefix: string, issues: FieldIssue[]): FieldIssue[] {
  return issues.map((i) => ({ ...i, field: i.field ? `${prefix}.${i.field}` : prefix }));
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
    // Absent unless given: a run then lasts timeout_seconds, as the version has it (calls/deadline.ts).
    ...(m.run_timeout_seconds !== undefined ? { run_timeout_seconds: m.run_timeout_seconds } : {}),
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
    ...(m.sandbox !== undefined ? { sandbox: m.sandbox } : {}),
    ...(m.accepted_file_types !== undefined
      ? { accepted_file_types: [...new Set(m.accepted_file_types)] }
      : {}),
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

/** Every JSON Schema the manifest carries must compile (ajv, with the platform's limits). */
function checkJsonSchemas(value: Record<string, unknown>, report: (field: string, message: string) => void) {
  const schemas: [string, unknown][] = [
    ['input_schema', value.input_schema],
    ['output_schema', value.output_schema],
  ];
  if (Array.isArray(value.custom_tools)) {
    value.custom_tools.forEach((tool, i) => {
      if (isRecord(tool)) schemas.push([`custom_tools.${i}.input_schema`, tool.input_schema]);
    });
  }
  for (const [field, schema] of schemas) {
    if (!isRecord(schema)) continue;
    const result = compileJsonSchema(schema);
    if (!result.ok) for (const e of result.errors) report(field, `is not a valid JSON Schema: ${e}`);
  }
}

export function buildManifestSchema(opts: Partial<RuleOptions> = {}) {
  const ruleOptions: RuleOptions = { allowNoSecrets: opts.allowNoSecrets ?? false };
  return baseSchema
    .superRefine((value, ctx) => {
      if (!isRecord(value)) return;
      const report: AddIssue = (field, message, also) =>
        ctx.addIssue({
          code: 'custom',
          path: field.split('.'),
          message,
          ...(also ? { params: { also } } : {}),
        });
      // The field schema's own issues, so a rule across fields can stay quiet about a field it refused
      // (a raw unrecognized_keys issue has no path yet: it is about the top level).
      const refused = ctx.issues.map((i) => (i.path ?? []).map(String).join('.'));
      const failed = (field: string) => refused.some((p) => p === field || p.startsWith(`${field}.`));
      checkJsonSchemas(value, report);
      checkRules(value, report, ruleOptions, failed);
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

/**
 * `sent`: the top-level fields a PATCH sent (parseManifest's option). A rule across fields that
 * names a field kept from the stored version is told on the sent field it was compared with: the
 * version was valid, so the field sent is the one that broke the rule.
 */
function toFieldIssues(issues: z.core.$ZodIssue[], sent?: ReadonlySet<string>): FieldIssue[] {
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
      const also = issue.code === 'custom' ? (issue.params?.also as string[] | undefined) : undefined;
      const top = (field: string) => field.split('.')[0] as string;
      const instead = sent && !sent.has(top(path)) ? also?.filter((f) => sent.has(top(f))) : undefined;
      if (instead && instead.length > 0) {
        for (const f of instead) push(f, `conflicts with this version's ${path}: ${issue.message}`);
      } else push(path, issue.message);
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
  /** `sent`: for a PATCH merged over a stored version, the top-level fields the request sent. */
  options: { allowNoSecrets?: boolean; sent?: ReadonlySet<string> } = {},
): ParseManifestResult {
  if (!isRecord(input)) return { ok: false, issues: [{ field: '', message: 'must be a JSON object' }] };
  // Stored whole on the version's record: bounded in bytes before anything else is checked.
  const size = jsonBytes(input);
  if (size > MAX_MANIFEST_BYTES)
    return { ok: false, issues: [{ field: '', message: overBytes(MAX_MANIFEST_BYTES, size) }] };
  const schema = options.allowNoSecrets ? manifestSchemaNoSecrets : manifestSchema;
  const result = schema.safeParse(input, { error: errorMap });
  if (!result.success) return { ok: false, issues: toFieldIssues(result.error.issues, options.sent) };
  const warnings: Warning[] = [];
  if ('model' in input) {
    warnings.push({ code: 'DEPRECATED_FIELD', field: 'model', message: 'ignored; use default_models' });
  }
  const loopSecrets = loopSecretsWarning(result.data);
  if (loopSecrets) warnings.push(loopSecrets);
  return { ok: true, manifest: result.data, warnings };
}

/**
 * A managed loop runs every command in one sandbox that its model shapes (bash runs anything,
 * write_file rewrites what a custom tool runs), and whoever calls the agent steers the model: a
 * secret in that sandbox is the caller's to read (`printenv X | rev`, which no redaction catches).
 * So the declared secrets go in only when the manifest says so (loop.secrets_in_sandbox), and
 * publishing says either way what that means (docs/manifest.md, "Secrets in a managed loop").
 */
function loopSecretsWarning(m: Manifest): Warning | undefined {
  if (m.execution_engine !== 'managed_loop') return undefined;
  const names = [...m.required_secrets, ...m.optional_secrets];
  if (names.length === 0) return undefined;
  const listed = names.join(', ');
  if (m.loop?.secrets_in_sandbox === true) {
    return {
      code: 'SECRETS_IN_SANDBOX',
      field: 'loop.secrets_in_sandbox',
      message: `the loop's sandbox gets ${listed}: anyone who may call this agent can read these values through its tools (bash: printenv), members of its workspace included when the values are the workspace's`,
    };
  }
  return {
    code: 'SECRETS_NOT_IN_SANDBOX',
    field: 'loop.secrets_in_sandbox',
    message: `the loop's sandbox does not get ${listed} (the caller steers its tools and could read them); set loop.secrets_in_sandbox to true to give them to it`,
  };
}
