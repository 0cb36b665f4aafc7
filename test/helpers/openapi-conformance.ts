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

/**
 * An openapi-fetch middleware that checks every answer the SDK receives against the schema
 * /openapi.json documents for that operation and status, adding each mismatch to `problems`: the
 * document is true as served, not only valid.
 */
export function conformance(problems: string[]): Middleware {
  return {
    async onResponse({ schemaPath, request, response }) {
      const op = doc.paths[schemaPath]?.[request.method.toLowerCase()];
      const documented = op?.responses[String(response.status)] as
        | { content?: Record<string, { schema: Json }> }
        | undefined;
      if (!documented)
        return void problems.push(`${request.method} ${schemaPath}: ${response.status} not documented`);
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) return;
      const validate = ajv.compile({ ...schema, components: doc.components });
      if (!validate(await response.clone().json()))
        problems.push(
          `${request.method} ${schemaPath} ${response.status}: ${ajv.errorsText(validate.errors)}`,
        );
    },
  };
}
