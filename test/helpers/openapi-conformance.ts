import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Middleware } from 'openapi-fetch';
import { buildOpenApi } from '../../functions/platform/openapi.ts';

type Json = Record<string, unknown>;
const doc = buildOpenApi() as {
  paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
  components: Json;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** The JSON schema /openapi.json documents for an answer, or what is wrong (its status undocumented). */
function documented(schemaPath: string, method: string, status: number): { problem?: string; schema?: Json } {
  const op = doc.paths[schemaPath]?.[method.toLowerCase()];
  const response = op?.responses[String(status)] as
    | { content?: Record<string, { schema: Json }> }
    | undefined;
  if (!response) return { problem: `${method} ${schemaPath}: ${status} not documented` };
  const schema = response.content?.['application/json']?.schema;
  return schema ? { schema } : {};
}

function validated(
  schemaPath: string,
  method: string,
  status: number,
  schema: Json,
  body: unknown,
): string[] {
  const validate = ajv.compile({ ...schema, components: doc.components });
  return validate(body) ? [] : [`${method} ${schemaPath} ${status}: ${ajv.errorsText(validate.errors)}`];
}

/**
 * What is wrong with an answer by the schema /openapi.json documents for its operation (the
 * route's template, `schemaPath`) and status: nothing (empty) when it conforms.
 */
export function documentProblems(
  schemaPath: string,
  method: string,
  status: number,
  body: unknown,
): string[] {
  const { problem, schema } = documented(schemaPath, method, status);
  if (problem) return [problem];
  return schema ? validated(schemaPath, method, status, schema, body) : [];
}

/**
 * An openapi-fetch middleware that checks every answer the SDK receives against the schema
 * /openapi.json documents for that operation and status, adding each mismatch to `problems`: the
 * document is true as served, not only valid.
 */
export function conformance(problems: string[]): Middleware {
  return {
    async onResponse({ schemaPath, request, response }) {
      const { problem, schema } = documented(schemaPath, request.method, response.status);
      if (problem) return void problems.push(problem);
      // A stream of events (the route's text/event-stream answer) is checked by its status alone.
      if (!schema || !response.headers.get('content-type')?.startsWith('application/json')) return;
      const body: unknown = await response.clone().json();
      problems.push(...validated(schemaPath, request.method, response.status, schema, body));
    },
  };
}
