import { createHash } from 'node:crypto';
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isRecord } from '../../shared/is-record.ts';
import { isLinearPattern, linearRegExp, UnsupportedPatternError } from './linear-regexp.ts';

/*
 * Users' JSON Schemas (an agent's input_schema and output_schema, a custom tool's input_schema):
 * compiled with ajv (draft 2020-12, patterns on a linear-time engine), once per distinct schema
 * and cached. The manifest checks them with compileJsonSchema; calls validate with
 * compileInputValidator.
 */

export const MAX_SCHEMA_CHARS = 64 * 1024;

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

const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const MAX_CACHED_VALIDATORS = 500;
/** Schemas up to this length are cached under their JSON text, longer ones under its SHA-256. */
const MAX_TEXT_KEY_CHARS = 2048;
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
  // A short schema is its own key (hashing it cost more than the lookup, on every call); a long
  // one is keyed by its hash, so the cache's keys stay small.
  const key =
    json.length <= MAX_TEXT_KEY_CHARS ? json : createHash('sha256').update(json).digest('base64url');
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

/** The validators of schemas read shared, by the schema object (gone with it). */
const validatorsOfShared = new WeakMap<object, ValidateFunction>();

/**
 * The cached validator for an agent's input (or output) schema; equal schemas give the same
 * function. Throws on a schema that does not compile (a published manifest's schemas always do).
 */
export function compileInputValidator(schema: Record<string, unknown>): ValidateFunction {
  // A schema read shared (deep-frozen: ports/store.ts, ReadOptions) is the same object for every
  // call of its agent version: its validator is found by the object, with no JSON text made of it.
  const frozen = Object.isFrozen(schema);
  const known = frozen ? validatorsOfShared.get(schema) : undefined;
  if (known) return known;
  const result = compileJsonSchema(schema);
  if (!result.ok) throw new Error(`Invalid JSON Schema: ${result.errors.join('; ')}`);
  if (frozen) validatorsOfShared.set(schema, result.validate);
  return result.validate;
}
