/**
 * A published agent's JSON Schema, made safe to turn into TypeScript on a user's machine. The
 * schema is someone else's data (any author can publish a public agent), and
 * json-schema-to-typescript trusts its input: `tsType` is pasted into the module as code, and a
 * `$ref` to a file or URL is read. So the copy compiled has neither: the generator's own keywords
 * (`tsType`, `tsEnumNames`) are removed, and a `$ref` that leaves the document becomes `{}` (any
 * JSON value). The platform refuses both at publish (ajv's strict mode knows no `tsType`, and a
 * `$ref` it cannot resolve fails to compile), so this guards against a server that does not.
 */

type Schema = { [key: string]: unknown };

/** The generator's extension keywords: code and enum member names, not JSON Schema. */
const CODE_KEYWORDS = ['tsType', 'tsEnumNames'];

/** Keywords whose value maps names (of properties, definitions) to schemas. */
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

/** Keywords whose value is data (instances), never a schema: left as they are. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every schema position is visited: any value that is not data is treated as a schema, so a
 * keyword this list does not name is still cleaned (the generator may read it as one).
 */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (!isObject(value)) return value;
  const out: Schema = {};
  for (const [key, v] of Object.entries(value)) {
    if (CODE_KEYWORDS.includes(key)) continue;
    if (key === '$ref' && (typeof v !== 'string' || !v.startsWith('#'))) continue;
    if (DATA_KEYWORDS.has(key)) out[key] = v;
    else if (SCHEMA_MAPS.has(key) && isObject(v))
      out[key] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, clean(s)]));
    else out[key] = clean(v);
  }
  return out;
}

/**
 * The schema to compile: cleaned as above, without a root `title` or `$id` (the generator would
 * name the root type after them; the caller names it), and with a root `$ref` moved into `allOf`
 * (a root that is only a reference would be emitted under the referenced definition's name).
 * A missing schema (null) is any JSON object, as the platform accepts and answers then.
 */
export function safeSchema(schema: unknown): Schema {
  if (!isObject(schema)) return { type: 'object' };
  const { title, $id, $ref, ...rest } = clean(schema) as Schema;
  if (title !== undefined && rest.description === undefined) rest.description = String(title);
  if (typeof $ref === 'string') rest.allOf = [{ $ref }, ...(Array.isArray(rest.allOf) ? rest.allOf : [])];
  return rest;
}
