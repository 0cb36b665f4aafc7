import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { z } from 'zod';
import { type AuthContext, authenticate } from '../core/api-keys/api-keys.ts';
import type { AnswerFirstOffer } from '../core/calls/call-context.ts';
import {
  type AddressAdmission,
  addressLimited,
  countAddressRequest,
} from '../core/usage/address-rate-limit.ts';
import { type RateLimitState, rateLimitHeaders, rateLimitState } from '../core/usage/daily-usage.ts';
import { InvalidCursorError } from '../ports/store.ts';
import { clientKeyed } from '../shared/client-keyed.ts';
import {
  bodyTooLarge,
  ERROR_CODES,
  type FieldIssue,
  invalidInput,
  PlatformError,
  parseJsonBody,
} from '../shared/errors.ts';
import { logServerError } from '../shared/server-error-log.ts';
import { corsHeaders, preflightHeaders } from './cors.ts';
import type { Deps } from './deps.ts';
import type { ErrorEnvelope } from './envelope.ts';
import { eventBodySize, eventBodySource } from './event-body.ts';
import type { OperationId, ResourceModule, RouteDef, Routes } from './routes.ts';
import { routeList } from './routes.ts';

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

/** The body of a route with `binaryBody`. */
export interface BinaryBody {
  data: Buffer;
  contentType: string | undefined;
}

/**
 * The body of a route with a streamed `binaryBody` (event-body.ts): its bytes when they are in
 * memory already, a stream when the local server spooled it to a file.
 */
export interface StreamBody {
  source: Buffer | Readable;
  contentType: string | undefined;
}

export interface OperationInput<R extends RouteDef> {
  params: Out<R['params']>;
  query: Out<R['query']>;
  body: R['binaryBody'] extends { stream: true }
    ? StreamBody
    : R['binaryBody'] extends object
      ? BinaryBody
      : Out<R['body']>;
  auth: R['auth'] extends 'api-key' ? AuthContext : undefined;
  deps: Deps;
  requestId: string;
  /** A request header by lower-case name. */
  header: (name: string) => string | undefined;
  /** The local server's offer to settle work after the answer is sent (LocalInvocation.answerFirst). */
  answerFirst?: AnswerFirstOffer | undefined;
}

type Body<R extends RouteDef> = R['success']['schema'] extends z.ZodType
  ? z.input<R['success']['schema']>
  : undefined;
type Result<R extends RouteDef> = R['protocol'] extends string
  ? ProtocolReply
  : Body<R> | Reply<Body<R>> | HtmlReply;

/** The operations a resource module implements: one per route of that module, typed by the route. */
export type Operations<M extends ResourceModule> = {
  [K in OperationId as Routes[K]['module'] extends M ? K : never]: (
    input: OperationInput<Routes[K]>,
  ) => Promise<Result<Routes[K]>>;
};

/** An operation's answer with extra response headers (Deprecation, Sunset, Link …). */
export class Reply<T> {
  readonly body: T;
  readonly headers: Record<string, string>;
  constructor(body: T, headers: Record<string, string>) {
    this.body = body;
    this.headers = headers;
  }
}

/** The answer to a CORS preflight (OPTIONS) on a known path: 204 with the path's methods. */
class PreflightReply {
  readonly methods: string[];
  constructor(methods: string[]) {
    this.methods = methods;
  }
}

/** A page instead of JSON (the local checkout page): sent as text/html, as is. */
export class HtmlReply {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
  }
}

/**
 * A protocol's own answer (a route with `protocol`, such as MCP's JSON-RPC): its status, headers
 * and body are sent as they are. The platform adds only X-Request-Id, Cache-Control and the
 * rate-limit headers.
 */
export class ProtocolReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  constructor(status: number, headers: Record<string, string>, body: string) {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

interface RequestState {
  requestId: string;
  /** The client's address (the connection's, never a header) and the request's Origin. */
  address: string;
  origin: string | undefined;
  deps?: Deps;
  operationId?: OperationId;
  route?: RouteDef;
  auth?: AuthContext;
  /** This request, counted against its address's limit (requests without a valid key). */
  addressAdmission?: AddressAdmission;
  /** The methods of the requested path, when the method asked is not one of them (405, preflight). */
  allow?: string[];
  input?: { params: unknown; query: unknown; body: unknown };
}

/**
 * What the local server may hand a handler besides Lambda's context: the caller it already
 * authenticated (before reading the body) for this very request, so the key is not read twice.
 * API Gateway's invocations never carry it; they authenticate in the middleware.
 */
export interface LocalInvocation {
  authenticated?: AuthContext;
  /**
   * Takes work to settle after the answer is sent, when the local server allows it now, and says
   * whether it took it (functions/platform/answer-first.ts).
   */
  answerFirst?: AnswerFirstOffer;
  /** A keyless request the local server counted against its address (and admitted) before its body. */
  addressAdmission?: AddressAdmission;
}

export type ApiHandler = (
  event: APIGatewayProxyEvent,
  context?: Partial<Context> & LocalInvocation,
) => Promise<APIGatewayProxyResult>;

/**
 * Builds the Lambda handler of one resource module. The same function serves API Gateway and the
 * local server (which shapes its requests as API Gateway REST events). The middleware chain:
 * request scope (id, deps, route) -> authentication -> input parsing (zod); responses and errors
 * are shaped in one place, `respond`, which adds the request id and rate-limit headers.
 */
export function createModuleHandler<M extends ResourceModule>(
  module: M,
  operations: Operations<M>,
  getDeps: () => Promise<Deps>,
): ApiHandler {
  const table = new Map<string, [OperationId, RouteDef]>();
  for (const [id, r] of routeList) if (r.module === module) table.set(`${r.method} ${r.path}`, [id, r]);

  const base = async (_event: APIGatewayProxyEvent, context: Context & { platform: RequestState }) => {
    const s = context.platform;
    if (s.allow) return new PreflightReply(s.allow);
    const op = (operations as Record<string, (input: unknown) => Promise<unknown>>)[s.operationId as string];
    if (!op || !s.input || !s.deps) throw new Error(`No operation for ${s.operationId}`);
    return op({
      ...s.input,
      auth: s.auth,
      deps: s.deps,
      requestId: s.requestId,
      header: (name: string) => header(_event, name.toLowerCase()),
      answerFirst: (context as Context & LocalInvocation).answerFirst,
    });
  };

  const scope: MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> = {
    before: async (request) => {
      const ctx = request.context as Context & LocalInvocation & { platform: RequestState };
      const event = request.event;
      const s: RequestState = {
        requestId: platformRequestId(event.requestContext?.requestId),
        address: event.requestContext?.identity?.sourceIp ?? '',
        origin: header(event, 'origin'),
      };
      ctx.platform = s;
      s.deps = await getDeps();
      const found = table.get(`${event.httpMethod} ${event.resource}`);
      if (!found) return unrouted(event, s, ctx.authenticated);
      [s.operationId, s.route] = found;
      if (s.route.auth === 'none') {
        s.addressAdmission = ctx.addressAdmission ?? (await countAddressRequest(s.deps, s.address));
        if (s.addressAdmission.refused) throw addressLimited(s.addressAdmission, s.deps.clock.now());
      }
    },
  };

  const auth: MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> = {
    before: async (request) => {
      const ctx = request.context as Context & LocalInvocation & { platform: RequestState };
      const s = ctx.platform;
      if (s.route?.auth !== 'api-key' || !s.deps || s.allow) return;
      // Resolved by the local server for this request a moment ago: the same key, the same answer.
      if (ctx.authenticated) {
        s.auth = ctx.authenticated;
        return;
      }
      const deps = s.deps;
      s.auth = await authenticate(deps, header(request.event, 'authorization'), {
        acceptRunCredential: s.route.acceptsRunCredential === true,
      }).catch(async (err: unknown) => {
        if (!(err instanceof PlatformError)) throw err;
        const refusal = await unauthenticatedRefusal(deps, s.address, err);
        s.addressAdmission = refusal.admission;
        throw refusal.error;
      });
    },
  };

  const parse: MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> = {
    before: async (request) => {
      const s = (request.context as Context & { platform: RequestState }).platform;
      if (!s.route || !s.deps || s.allow) return;
      s.input = parseInput(request.event, s.route, s.deps.config.maxBodyBytes);
    },
  };

  return middy(base as never)
    .use(respond())
    .use(scope)
    .use(auth)
    .use(parse) as unknown as ApiHandler;
}

function respond(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    after: async (request) => {
      const s = stateOf(request);
      const status = s.route?.success.status ?? 200;
      const result = request.response as unknown;
      if (result instanceof PreflightReply) {
        request.response = {
          statusCode: 204,
          headers: {
            ...(await commonHeaders(s)),
            Allow: result.methods.join(', '),
            ...preflightHeaders(
              s.deps?.config.corsOrigins ?? [],
              s.origin,
              result.methods,
              header(request.event, 'access-control-request-headers'),
            ),
          },
          body: '',
        };
        return;
      }
      if (result instanceof ProtocolReply) {
        // The protocol's own headers win, whatever their case (Content-Type, content-type).
        const own = new Set(Object.keys(result.headers).map((k) => k.toLowerCase()));
        const common = Object.entries(await commonHeaders(s)).filter(([k]) => !own.has(k.toLowerCase()));
        request.response = {
          statusCode: result.status,
          headers: { ...Object.fromEntries(common), ...result.headers },
          body: result.body,
        };
        logServerError(s.deps?.logger, {
          requestId: s.requestId,
          method: request.event.httpMethod,
          route: s.route?.path ?? request.event.resource,
          status: result.status,
          code: undefined,
        });
        return;
      }
      if (result instanceof HtmlReply) {
        request.response = {
          statusCode: status,
          headers: {
            ...(await commonHeaders(s)),
            'Content-Type': 'text/html; charset=utf-8',
            'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
          },
          body: result.html,
        };
        return;
      }
      const body = result instanceof Reply ? result.body : result;
      request.response = {
        statusCode: status,
        headers: { ...(await commonHeaders(s)), ...(result instanceof Reply ? result.headers : {}) },
        body:
          status === 204 ? '' : JSON.stringify(s.route?.document ? body : withMetadata(body, s.requestId)),
      };
    },
    onError: async (request) => {
      const s = stateOf(request);
      const err = toPlatformError(request.error, s.requestId);
      logServerError(s.deps?.logger, {
        requestId: s.requestId,
        method: request.event?.httpMethod ?? '',
        route: s.route?.path ?? request.event?.resource,
        status: err.status,
        code: err.code,
        ...(request.error instanceof PlatformError ? {} : { cause: request.error }),
      });
      const headers = await commonHeaders(s, refusingQuota(err));
      if (err.code === 'RATE_LIMITED' && typeof err.details?.suggested_wait_time === 'number') {
        headers['Retry-After'] = String(err.details.suggested_wait_time);
      }
      if (err.code === 'METHOD_NOT_ALLOWED' && s.allow) headers.Allow = s.allow.join(', ');
      request.response = {
        statusCode: err.status,
        headers: { ...headers, ...challengeHeaders(err) },
        body: JSON.stringify(errorEnvelope(err, s.requestId)),
      };
    },
  };
}

function stateOf(request: Request<APIGatewayProxyEvent, APIGatewayProxyResult>): RequestState {
  const ctx = request.context as Context & { platform?: RequestState };
  ctx.platform ??= {
    requestId: `req_${randomUUID()}`,
    address: request.event?.requestContext?.identity?.sourceIp ?? '',
    origin: request.event ? header(request.event, 'origin') : undefined,
  };
  return ctx.platform;
}

/**
 * A request no route of this module takes (API Gateway sends every method of every path of the API
 * to some module: docs/http.md). A path with routes answers OPTIONS as a CORS preflight and other
 * methods with 405 and Allow; any other path is 404. The caller's key, if it is good, still decides
 * whose rate limit the answer shows.
 */
async function unrouted(event: APIGatewayProxyEvent, s: RequestState, known?: AuthContext): Promise<void> {
  const methods = routeList.filter(([, r]) => r.path === event.resource).map(([, r]) => r.method);
  s.auth = known ?? (await tryAuthenticate(s, header(event, 'authorization')));
  if (!s.auth && s.deps) {
    // Keyless, so under the address's limit like any other keyless request: past it, 429.
    s.addressAdmission = await countAddressRequest(s.deps, s.address);
    if (s.addressAdmission.refused) throw addressLimited(s.addressAdmission, s.deps.clock.now());
  }
  if (methods.length === 0) {
    throw new PlatformError('NOT_FOUND', `No route for ${event.httpMethod} ${event.path ?? event.resource}`);
  }
  const allow = [...new Set(methods), 'OPTIONS'];
  s.allow = allow;
  if (event.httpMethod === 'OPTIONS') return;
  throw new PlatformError(
    'METHOD_NOT_ALLOWED',
    `${event.httpMethod} is not supported on ${event.path ?? event.resource}; it supports ${allow.join(', ')}`,
    { allow },
  );
}

async function tryAuthenticate(s: RequestState, authorization: string | undefined) {
  if (!authorization || !s.deps) return undefined;
  try {
    return await authenticate(s.deps, authorization, { acceptRunCredential: false });
  } catch {
    return undefined; // not a good key: the answer is the same, under the address's limit
  }
}

/**
 * What a request whose key is missing or wrong is told: it counts against its address like any
 * keyless request (docs/http.md), so past the address's limit it is 429, not 401, and guessing keys
 * is bounded by that limit. `admission` is the count, for the answer's rate-limit headers.
 */
export async function unauthenticatedRefusal(
  deps: Deps,
  address: string,
  err: PlatformError,
): Promise<{ error: PlatformError; admission: AddressAdmission }> {
  const admission = await countAddressRequest(deps, address);
  const error =
    admission.refused && err.code === 'UNAUTHORIZED' ? addressLimited(admission, deps.clock.now()) : err;
  return { error, admission };
}

/** The quota a 429 came from when it is not the daily call quota the headers show by default. */
function refusingQuota(err: PlatformError): RateLimitState | undefined {
  const d = err.details;
  if (err.code !== 'RATE_LIMITED' || !d || !['sandbox', 'paid'].includes(String(d.quota))) return undefined;
  if (typeof d.limit !== 'number' || typeof d.reset !== 'number') return undefined;
  return { limit: d.limit, remaining: 0, reset: d.reset };
}

function commonHeaders(s: RequestState, quota?: RateLimitState): Promise<Record<string, string>> {
  return responseHeaders(s.deps, s, quota);
}

/**
 * The headers of every JSON answer: content type, no caching, the request id, CORS for the
 * request's origin and the rate-limit headers (when the dependencies are at hand). Used by every
 * handler's answers, and by the local server for what it refuses before a handler runs.
 */
export async function responseHeaders(
  deps: Deps | undefined,
  s: RateLimitSubject & { origin?: string | undefined },
  quota?: RateLimitState,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Request-Id': s.requestId,
  };
  if (!deps) return headers;
  return {
    ...headers,
    ...corsHeaders(deps.config.corsOrigins, s.origin),
    ...(await edgeRateLimitHeaders(deps, s, quota)),
  };
}

/** Whose rate limit a response shows: the caller's (auth), or the client address's. */
type RateLimitSubject = {
  requestId: string;
  address: string;
  auth?: AuthContext;
  addressAdmission?: AddressAdmission;
};

/**
 * The X-RateLimit-* headers of a response (spec "Limits": on every response): the caller's daily
 * quota when a key vouches for the request (or the quota that refused it), otherwise the client
 * address's limit, counting this request if nothing counted it yet.
 */
async function edgeRateLimitHeaders(
  deps: Deps,
  s: RateLimitSubject,
  quota?: RateLimitState,
): Promise<Record<string, string>> {
  try {
    if (quota) return rateLimitHeaders(quota);
    if (s.auth) return rateLimitHeaders(await rateLimitState(deps, s.auth));
    s.addressAdmission ??= await countAddressRequest(deps, s.address);
    return rateLimitHeaders(s.addressAdmission.state);
  } catch (err) {
    // A failed counter read must not turn a good response into an error.
    deps.logger.warn('rate-limit state unavailable', { request_id: s.requestId, error: String(err) });
    return {};
  }
}

/**
 * The request id the platform reports (`req_<uuid>`): the local server's own, or API Gateway's
 * (a bare UUID, which the access log and API Gateway's own answers carry) with the same prefix, so a
 * client sees one shape on both deployments and an operator finds the id in the access log.
 */
export function platformRequestId(gatewayId: string | undefined): string {
  if (!gatewayId) return `req_${randomUUID()}`;
  return gatewayId.startsWith('req_') ? gatewayId : `req_${gatewayId}`;
}

/**
 * A 401's challenge (RFC 9110 15.5.2: a 401 carries WWW-Authenticate): the API key as a bearer
 * token. With it, clients such as MCP's know to send their configured key rather than start an
 * OAuth flow the platform does not offer (docs/http.md).
 */
export function challengeHeaders(err: PlatformError): Record<string, string> {
  return err.code === 'UNAUTHORIZED' ? { 'WWW-Authenticate': 'Bearer realm="agenthost"' } : {};
}

export function errorEnvelope(err: PlatformError, requestId: string): ErrorEnvelope {
  const { suggested_wait_time, ...details } = err.details ?? {};
  return {
    error: {
      code: err.code,
      message: err.message,
      is_retryable: ERROR_CODES[err.code].retryable,
      ...(typeof suggested_wait_time === 'number' ? { suggested_wait_time } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    },
    metadata: { request_id: requestId },
  };
}

/** What an error is answered as; an unexpected one (logged with its stack in onError) is a 500. */
function toPlatformError(error: unknown, requestId: string): PlatformError {
  if (error instanceof PlatformError) return error;
  if (error instanceof InvalidCursorError)
    return invalidInput([{ field: 'query.cursor', message: error.message }]);
  return new PlatformError(
    'INTERNAL_ERROR',
    `Internal error; quote request id ${requestId} when reporting it`,
  );
}

function withMetadata(body: unknown, requestId: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const existing = (body as { metadata?: Record<string, unknown> }).metadata;
  return { ...body, metadata: { ...(existing ?? {}), request_id: requestId } };
}

/**
 * A request header by its lower-case name (API Gateway keeps the client's case; the first of two
 * spellings wins). A call reads a dozen headers, so each event's are lowered once, not per lookup.
 */
export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const headers = event.headers;
  if (!headers) return undefined;
  let lowered = loweredHeaders.get(headers);
  if (!lowered) {
    lowered = new Map();
    for (const k of Object.keys(headers)) {
      const v = headers[k];
      const lower = k.toLowerCase();
      if (v !== undefined && !lowered.has(lower)) lowered.set(lower, v);
    }
    loweredHeaders.set(headers, lowered);
  }
  return lowered.get(name);
}

/** Each event's headers by lower-case name (events are not changed once built). */
const loweredHeaders = new WeakMap<object, Map<string, string>>();

function parseInput(event: APIGatewayProxyEvent, route: RouteDef, maxBodyBytes: number) {
  const issues: FieldIssue[] = [];
  const params = validate(route.params, event.pathParameters ?? {}, 'path', issues);

  const rawQuery = clientKeyed<string>();
  for (const [k, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (!values) continue;
    if (values.length > 1) issues.push({ field: `query.${k}`, message: 'must be given at most once' });
    rawQuery[k] = values[values.length - 1] as string;
  }
  if (!event.multiValueQueryStringParameters) Object.assign(rawQuery, event.queryStringParameters ?? {});
  const query = validate(route.query, rawQuery, 'query', issues, true);

  let body: unknown;
  if (route.binaryBody?.stream) {
    if (eventBodySize(event) > route.binaryBody.maxBytes) throw bodyTooLarge(route.binaryBody.maxBytes);
    body = {
      source: eventBodySource(event),
      contentType: header(event, 'content-type'),
    } satisfies StreamBody;
  } else if (route.binaryBody) {
    const data = event.body
      ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
      : Buffer.alloc(0);
    if (data.length > route.binaryBody.maxBytes) throw bodyTooLarge(route.binaryBody.maxBytes);
    body = { data, contentType: header(event, 'content-type') } satisfies BinaryBody;
  } else if (route.body) {
    const text = event.body
      ? event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body
      : '';
    if (Buffer.byteLength(text, 'utf8') > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
    let raw: unknown = {};
    if (text.trim() !== '') {
      const type = header(event, 'content-type') ?? '';
      if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
        throw new PlatformError(
          'UNSUPPORTED_TYPE',
          'The request body must be JSON (Content-Type: application/json)',
          {
            fields: [
              { field: 'header.content-type', message: `must be application/json, got "${type || 'none'}"` },
            ],
          },
        );
      }
      raw = parseJsonBody(text);
    }
    body = validate(route.body, raw, 'body', issues);
  }
  if (issues.length > 0) throw invalidInput(issues);
  return { params, query, body };
}

function validate(
  schema: z.ZodType | undefined,
  value: unknown,
  source: string,
  issues: FieldIssue[],
  lenientWhenAbsent = false,
): unknown {
  if (!schema) return lenientWhenAbsent ? {} : value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const path = [source, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ field: `${path}.${key}`, message: 'is not a known field' });
    } else {
      issues.push({ field: path, message: issue.message });
    }
  }
  return undefined;
}

/** A lazily built, process-wide dependency set for Lambda entry points. */
export function lazyDeps(build: () => Promise<Deps>): () => Promise<Deps> {
  let deps: Promise<Deps> | undefined;
  return () => {
    deps ??= build().catch((err) => {
      deps = undefined;
      throw err;
    });
    return deps;
  };
}
