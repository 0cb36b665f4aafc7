import { randomUUID } from 'node:crypto';
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
import { PlatformError } from '../shared/errors.ts';
import { logServerError } from '../shared/server-error-log.ts';
import { corsHeaders, preflightHeaders } from './cors.ts';
import type { Deps } from './deps.ts';
import { challengeHeaders, errorEnvelope, toPlatformError } from './error-answer.ts';
import { type BinaryBody, parseInput, type StreamBody } from './operation-input.ts';
import { HtmlReply, PreflightReply, ProtocolReply, Reply } from './operation-replies.ts';
import { header } from './request-header.ts';
import { platformRequestId } from './request-id.ts';
import type { OperationId, ResourceModule, RouteDef, Routes } from './routes.ts';
import { routeList } from './routes.ts';

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

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

function withMetadata(body: unknown, requestId: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const existing = (body as { metadata?: Record<string, unknown> }).metadata;
  return { ...body, metadata: { ...(existing ?? {}), request_id: requestId } };
}
