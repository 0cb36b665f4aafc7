import * as z from 'zod';
import { errorEnvelopeSchema, metadataSchema } from '../edge/envelope.ts';
import { ERROR_CODES, type ErrorCode } from '../shared/errors.ts';
import { jsonValueRefs, multipartFilesSchema, RESPONSE_HEADERS, SCHEMA_COMPONENTS } from './openapi-parts.ts';
import { type RouteDef, routeList } from './routes.ts';

type JsonObject = Record<string, unknown>;

/** A zod schema as JSON Schema, with every "any value" made the JsonValue component (typed clients). */
const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonObject => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return jsonValueRefs(rest);
};

/**
 * Every success body of an object type also carries metadata.request_id: a property of the body's
 * own schema (not an allOf beside it, which additionalProperties: false would refuse), unless the
 * body declares a richer metadata itself (the call envelope).
 */
function successSchema(route: RouteDef, schema = route.success.schema): JsonObject | undefined {
  if (!schema) return undefined;
  const base = toSchema(schema, 'output');
  if (base.type !== 'object' || route.document) return base;
  const properties = (base.properties ?? {}) as JsonObject;
  if (properties.metadata) return base;
  return {
    ...base,
    properties: { ...properties, metadata: { $ref: '#/components/schemas/Metadata' } },
    required: [...((base.required as string[] | undefined) ?? []), 'metadata'],
  };
}

/** The route's own description, then the role a workspace-scoped route needs. */
function description(route: RouteDef): string | undefined {
  const role = route.workspaceRole
    ? `Needs the ${route.workspaceRole} role in the workspace (callers who are not members get 404).`
    : undefined;
  return [route.description, role].filter(Boolean).join(' ') || undefined;
}

function parameters(route: RouteDef): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
    ['header', route.headers],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input');
    const props = (json.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    // A value arrives as text but is parsed (limit=50 is a whole number, overdue=true a boolean):
    // the parsed type is what a client passes, unless the parse is not representable.
    const parsed = (toSchema(schema, 'output').properties ?? {}) as Record<string, JsonObject>;
    for (const [name, inputProp] of Object.entries(props)) {
      const parsedProp = parsed[name];
      const prop =
        parsedProp && !parsedProp.$ref
          ? { ...parsedProp, ...(inputProp.description ? { description: inputProp.description } : {}) }
          : inputProp;
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

/** The modules that touch no data (lib/module-access.ts gives them no table): they never find it busy. */
const STORELESS_MODULES = new Set(['health', 'openapi']);

/** The error codes an operation may answer: implied by its declaration, plus the ones it lists. */
export function errorCodes(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(['INTERNAL_ERROR']);
  // Any route that reads or writes data may find the store busy past its retries (StoreBusyError).
  if (!STORELESS_MODULES.has(route.module)) codes.add('SERVICE_UNAVAILABLE');
  if (route.auth === 'api-key') codes.add('UNAUTHORIZED').add('RATE_LIMITED');
  if (route.params || route.query || route.body || route.binaryBody || route.headers)
    codes.add('INVALID_INPUT');
  if (route.params || route.workspaceRole) codes.add('NOT_FOUND');
  if (route.workspaceRole === 'owner') codes.add('FORBIDDEN');
  if (route.body || route.binaryBody) codes.add('DOCUMENT_TOO_LARGE').add('UNSUPPORTED_TYPE');
  for (const code of route.errors ?? []) codes.add(code);
  return [...codes];
}

const statusText: Record<number, string> = {
  400: 'Invalid input (error.details.fields names each offending field)',
  401: 'Missing or invalid API key',
  402: 'Not enough credits for a paid agent',
  403: 'Forbidden: the owner role is needed, the caller may not use this agent or skill, a per-tier count is reached (error.details.quota "workspaces" or "invitations", with details.limit), or (MCP) the Host or Origin is not one the platform answers under',
  404: 'Not found (also for resources of workspaces the caller is not a member of)',
  409: 'Conflict with the current state (it already exists, or something depends on it)',
  413: 'Request body or file too large',
  415: 'Unsupported body or file type',
  422: 'Valid format, but the content cannot be processed',
  429: 'Daily quota, concurrency limit or the account\'s request units a minute (error.details.quota "requests") reached; retry after error.suggested_wait_time seconds (Retry-After)',
  500: 'Internal error (retryable)',
  502: 'Upstream LLM provider error (retryable)',
  503: 'Retry after error.suggested_wait_time seconds (Retry-After), nothing having changed: the data store stayed busy through a few seconds of retries (error.details.cause "store_busy"), or (a run) no sandbox could be started within its deadline, the platform\'s ceiling of sandboxes or its cloud account\'s quota reached (error.details.cause)',
  504: 'Timeout, or a sub-call would exceed the remaining deadline (retryable)',
};

/** One error response: the envelope with error.code narrowed to the codes this status carries here. */
function errorResponse(status: number, codes: ErrorCode[]): JsonObject {
  return {
    description: statusText[status] ?? `Error ${status}`,
    headers: {
      ...RESPONSE_HEADERS.common,
      ...(status === 429 || status === 503 ? RESPONSE_HEADERS.retry : {}),
      ...(status === 401 ? RESPONSE_HEADERS.challenge : {}),
    },
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/ErrorEnvelope' },
            {
              type: 'object',
              properties: {
                error: {
                  type: 'object',
                  properties: { code: { type: 'string', enum: codes } },
                  required: ['code'],
                },
              },
              required: ['error'],
            },
          ],
        },
      },
    },
  };
}

function errorResponses(route: RouteDef): JsonObject {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes(route)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: JsonObject = {};
  for (const status of [...byStatus.keys()].sort()) {
    out[String(status)] = errorResponse(status, byStatus.get(status) ?? []);
  }
  return out;
}

function successResponse(route: RouteDef): JsonObject {
  const headers = {
    ...RESPONSE_HEADERS.common,
    ...Object.fromEntries((route.success.headers ?? []).map((h) => [h, RESPONSE_HEADERS.success[h]])),
  };
  if (route.success.status === 204) return { description: route.success.description, headers };
  if (route.success.contentType) {
    return {
      description: route.success.description,
      headers,
      content: { [route.success.contentType]: { schema: { type: 'string' } } },
    };
  }
  const schema = successSchema(route);
  const stream = route.success.eventStream;
  const streamed = stream ? { 'text/event-stream': { schema: eventStreamSchema(stream) } } : {};
  return {
    description: route.success.description,
    headers,
    ...(schema ? { content: { 'application/json': { schema }, ...streamed } } : {}),
  };
}

/** The 202 a route answers for `Prefer: respond-async` (route-def.ts `accepted`). */
function acceptedResponse(route: RouteDef, accepted: NonNullable<RouteDef['accepted']>): JsonObject {
  return {
    description: accepted.description,
    headers: {
      ...RESPONSE_HEADERS.common,
      ...Object.fromEntries(accepted.headers.map((h) => [h, RESPONSE_HEADERS.success[h]])),
    },
    content: { 'application/json': { schema: successSchema(route, accepted.schema) } },
  };
}

/**
 * A Server-Sent Events answer: OpenAPI 3.1 has no schema for a stream's items (3.2's itemSchema),
 * so, as the vendors' own documents do, the schema is what each event's `data:` line holds, one of
 * the events' JSON objects, each variant titled with its `event:` name.
 */
function eventStreamSchema(stream: NonNullable<RouteDef['success']['eventStream']>): JsonObject {
  return {
    description: stream.description,
    oneOf: stream.events.map((e) => ({
      ...toSchema(e.data, 'output'),
      title: e.event,
      description: `event: ${e.event}. ${e.description}`,
    })),
  };
}

function requestBody(route: RouteDef): JsonObject | undefined {
  if (route.binaryBody) {
    const { contentTypes, json } = route.binaryBody;
    const schemaOf = (type: string): JsonObject => {
      if (type === 'application/json')
        return json ? toSchema(json, 'input') : { $ref: '#/components/schemas/JsonValue' };
      if (type === 'multipart/form-data') return multipartFilesSchema;
      return { type: 'string', format: 'binary' };
    };
    return {
      required: true,
      content: Object.fromEntries(
        contentTypes.map((t) => [
          t,
          {
            schema: schemaOf(t),
            ...(t === 'multipart/form-data'
              ? { encoding: { metadata: { contentType: 'application/json' } } }
              : {}),
          },
        ]),
      ),
    };
  }
  const body = route.documentedBody ?? route.body;
  if (!body) return undefined;
  return { required: true, content: { 'application/json': { schema: toSchema(body, 'input') } } };
}

/** Builds the OpenAPI 3.1 document from the route table and its zod schemas. */
export function buildOpenApi(options: { serverUrl?: string | undefined } = {}): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const [operationId, route] of routeList) {
    const params = parameters(route);
    const body = requestBody(route);
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonObject>)[route.method.toLowerCase()] = {
      operationId,
      summary: route.summary,
      ...(description(route) ? { description: description(route) } : {}),
      tags: [route.tag],
      ...(route.workspaceRole ? { 'x-workspace-role': route.workspaceRole } : {}),
      ...(route.auth === 'api-key' ? { security: [{ apiKey: [] }] } : { security: [] }),
      // The one route a run credential (an orchestrator run's PLATFORM_SERVICE_KEY) may use.
      ...(route.acceptsRunCredential ? { 'x-accepts-run-credential': true } : {}),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(body ? { requestBody: body } : {}),
      responses: {
        [String(route.success.status)]: successResponse(route),
        ...(route.accepted ? { '202': acceptedResponse(route, route.accepted) } : {}),
        ...errorResponses(route),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agenthost API',
      version: '0.1.0',
      description: [
        `Errors answer the error envelope; error.code is one of ${Object.keys(ERROR_CODES).join(', ')}, and each operation lists the codes each status carries.`,
        'Every response carries X-Request-Id and the rate-limit headers X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; 429 responses carry Retry-After; calls to a deprecated agent version carry Deprecation, Sunset and Link.',
      ].join(' '),
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    tags: [...new Set(routeList.map(([, r]) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An agenthost API key (ahk_…)' },
      },
      headers: RESPONSE_HEADERS.components,
      schemas: {
        ...SCHEMA_COMPONENTS,
        ErrorEnvelope: errorEnvelopeDocument(),
        Metadata: toSchema(metadataSchema, 'output'),
      },
    },
  };
}

/** The error envelope, with error.code as the enum of every code (an operation narrows it per status). */
function errorEnvelopeDocument(): JsonObject {
  const envelope = toSchema(errorEnvelopeSchema, 'output') as {
    properties: { error: { properties: Record<string, JsonObject> } };
  };
  envelope.properties.error.properties.code = { type: 'string', enum: Object.keys(ERROR_CODES) };
  return envelope;
}
