import * as z from 'zod';
import { ERROR_CODES } from '../shared/errors.ts';
import { errorEnvelopeSchema, metadataSchema } from './envelope.ts';
import { type RouteDef, routeList } from './routes.ts';

type JsonObject = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonObject => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
};

/** Every success body of an object type also carries metadata.request_id. */
function successSchema(route: RouteDef): JsonObject | undefined {
  if (!route.success.schema) return undefined;
  const base = toSchema(route.success.schema, 'output');
  if (base.type !== 'object' || route.document) return base;
  return {
    allOf: [base, { type: 'object', properties: { metadata: { $ref: '#/components/schemas/Metadata' } } }],
  };
}

function parameters(route: RouteDef): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input');
    const props = (json.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const { description, ...propSchema } = prop;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: propSchema,
      });
    }
  }
  return out;
}

const errorStatuses = (route: RouteDef): number[] => {
  const s = new Set<number>([500]);
  if (route.auth === 'api-key') s.add(401).add(429);
  if (route.params || route.query || route.body) s.add(400);
  if (route.params || route.workspaceRole) s.add(404);
  if (route.workspaceRole === 'owner') s.add(403);
  if (route.body || route.binaryBody) s.add(413).add(415);
  return [...s].sort();
};

const statusText: Record<number, string> = {
  400: 'Invalid input (error.details.fields names each offending field)',
  401: 'Missing or invalid API key',
  403: 'The caller is a member of the workspace but the operation needs the owner role',
  404: 'Not found (also for resources of workspaces the caller is not a member of)',
  413: 'Request body too large',
  415: 'Request body is not JSON',
  429: 'Daily quota exceeded',
  500: 'Internal error',
};

/** Builds the OpenAPI 3.1 document from the route table and its zod schemas. */
export function buildOpenApi(options: { serverUrl?: string | undefined } = {}): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const [operationId, route] of routeList) {
    const responses: JsonObject = {};
    const success = successSchema(route);
    responses[String(route.success.status)] = {
      description: route.success.description,
      ...(success ? { content: { 'application/json': { schema: success } } } : {}),
    };
    for (const status of errorStatuses(route)) {
      responses[String(status)] = {
        description: statusText[status],
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      };
    }
    const params = parameters(route);
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonObject>)[route.method.toLowerCase()] = {
      operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.workspaceRole
        ? {
            description: `Needs the ${route.workspaceRole} role in the workspace (callers who are not members get 404).`,
            'x-workspace-role': route.workspaceRole,
          }
        : {}),
      ...(route.auth === 'api-key' ? { security: [{ apiKey: [] }] } : { security: [] }),
      // The one route a run credential (an orchestrator run's PLATFORM_SERVICE_KEY) may use.
      ...(route.acceptsRunCredential ? { 'x-accepts-run-credential': true } : {}),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(route.binaryBody
        ? {
            requestBody: {
              required: true,
              content: Object.fromEntries(
                route.binaryBody.contentTypes.map((t) => [
                  t,
                  { schema: { type: 'string', format: 'binary' } },
                ]),
              ),
            },
          }
        : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: toSchema(route.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agenthost API',
      version: '0.1.0',
      description: `Error codes: ${Object.keys(ERROR_CODES).join(', ')}. Every response carries X-Request-Id; authenticated responses carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.`,
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An agenthost API key (ahk_…)' },
      },
      schemas: {
        ErrorEnvelope: toSchema(errorEnvelopeSchema, 'output'),
        Metadata: toSchema(metadataSchema, 'output'),
      },
    },
  };
}
