/**
 * The fixed parts of /openapi.json that no zod schema of the route table carries: the JsonValue
 * schema that stands for "any JSON" (so a generated client types such a value as JSON, never as
 * unknown), the multipart form of an agent call, and the response headers of the spec.
 */

type JsonObject = Record<string, unknown>;

const JSON_VALUE_REF = { $ref: '#/components/schemas/JsonValue' };

export const SCHEMA_COMPONENTS = {
  JsonValue: {
    description: 'Any JSON value',
    anyOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
      { type: 'array', items: JSON_VALUE_REF },
      { type: 'object', additionalProperties: JSON_VALUE_REF },
    ],
  },
};

/** Keywords whose value is one schema, and those whose value is a list or a map of schemas. */
const ONE_SCHEMA = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions'];

const isAnySchema = (s: JsonObject): boolean =>
  Object.keys(s).every((k) => k === 'description' || k === 'title' || k === 'default');

/**
 * Replaces each schema that allows any value (zod's unknown: `{}`) with the JsonValue component,
 * keeping its description. Only schema positions are visited: a `default: {}` stays a value.
 */
export function jsonValueRefs(schema: JsonObject): JsonObject {
  if (isAnySchema(schema)) return { ...JSON_VALUE_REF, ...schema };
  const out: JsonObject = { ...schema };
  for (const key of ONE_SCHEMA) {
    const v = out[key];
    if (v && typeof v === 'object' && !Array.isArray(v)) out[key] = jsonValueRefs(v as JsonObject);
  }
  for (const key of SCHEMA_LIST) {
    const v = out[key];
    if (Array.isArray(v)) out[key] = v.map((s) => jsonValueRefs(s as JsonObject));
  }
  for (const key of SCHEMA_MAP) {
    const v = out[key];
    if (v && typeof v === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(v as JsonObject).map(([name, s]) => [name, jsonValueRefs(s as JsonObject)]),
      );
    }
  }
  return out;
}

/** The spec's multipart form of a call: part `file` (one file) or repeated `files[]`, and `metadata`. */
export const multipartFilesSchema: JsonObject = {
  type: 'object',
  properties: {
    file: { type: 'string', format: 'binary', description: 'One file' },
    'files[]': {
      type: 'array',
      items: { type: 'string', format: 'binary' },
      description: 'Several files (at most 20), the part repeated',
    },
    metadata: {
      type: 'string',
      contentMediaType: 'application/json',
      description: 'A JSON object: the input, validated against the agent’s input_schema',
    },
  },
};

const header = (description: string, schema: JsonObject, required = false): JsonObject => ({
  description,
  required,
  schema,
});

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The spec's response headers ("Limits", "Versioning"), as components and as references to them. */
export const RESPONSE_HEADERS = {
  components: {
    'X-Request-Id': header(
      'The request id (also metadata.request_id of JSON bodies)',
      { type: 'string' },
      true,
    ),
    'X-RateLimit-Limit': header('The caller’s daily call limit', { type: 'integer' }),
    'X-RateLimit-Remaining': header('Calls left today', { type: 'integer' }),
    'X-RateLimit-Reset': header('Unix time (seconds) when the daily limit resets', { type: 'integer' }),
    'Retry-After': header('Seconds to wait before retrying (error.suggested_wait_time)', { type: 'integer' }),
    Deprecation: header('`true` when the agent version called is deprecated', {
      type: 'string',
      enum: ['true'],
    }),
    Sunset: header('HTTP date after which the deprecated version no longer answers', { type: 'string' }),
    Link: header('The successor version: </{org}/{agent}/{version}/{endpoint}>; rel="successor-version"', {
      type: 'string',
    }),
    'X-Trace-Id': header('The call’s trace id (metadata.trace_id; docs/traces.md)', { type: 'string' }),
    Location: header('The run: GET it for its status and, once it ended, its result (docs/runs.md)', {
      type: 'string',
    }),
    'Preference-Applied': header('The preference applied (RFC 7240): respond-async', {
      type: 'string',
      enum: ['respond-async'],
    }),
    'WWW-Authenticate': header(
      'How to authenticate: the API key as a bearer token',
      { type: 'string', enum: ['Bearer realm="agenthost"'] },
      true,
    ),
  },
  common: {
    'X-Request-Id': ref('X-Request-Id'),
    'X-RateLimit-Limit': ref('X-RateLimit-Limit'),
    'X-RateLimit-Remaining': ref('X-RateLimit-Remaining'),
    'X-RateLimit-Reset': ref('X-RateLimit-Reset'),
  },
  retry: { 'Retry-After': ref('Retry-After') },
  challenge: { 'WWW-Authenticate': ref('WWW-Authenticate') },
  /** What a route's success may add (route-def.ts `success.headers`). */
  success: {
    Deprecation: ref('Deprecation'),
    Sunset: ref('Sunset'),
    Link: ref('Link'),
    'X-Trace-Id': ref('X-Trace-Id'),
    Location: ref('Location'),
    'Preference-Applied': ref('Preference-Applied'),
  },
};
