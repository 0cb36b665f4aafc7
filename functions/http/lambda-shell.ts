import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { carriedAsBase64 } from '../edge/binary-media-types.ts';
import type { EdgeContext, FetchHandler } from '../edge/edge-context.ts';
import { fetchRequest } from '../edge/fetch-request.ts';
import { distinctHeaders, responseParts } from '../edge/lazy-response.ts';
import { newRequestId } from '../shared/request-ids.ts';

/*
 * The buffered Lambda shell: an API Gateway REST proxy event as a Fetch API Request, and the
 * Response as the proxy result. A Lambda is frozen once it returns, so work the answer left
 * (waitUntil) is done before it returns.
 */

export type ApiHandler = (
  event: APIGatewayProxyEvent,
  context?: Partial<Context>,
) => Promise<APIGatewayProxyResult>;

/** `finish`: what the function does last in each invocation (the tracer's flush: module-handler.ts). */
export function lambdaShell(app: FetchHandler, finish?: () => Promise<void>): ApiHandler {
  return async (event) => {
    const work: Promise<unknown>[] = [];
    const response = await app(toRequest(event), edgeContext(event), { waitUntil: (p) => void work.push(p) });
    const result = await toResult(response);
    await Promise.allSettled(work);
    await finish?.().catch(() => undefined);
    return result;
  };
}

/**
 * What the event says of its request besides the request itself. The platform mints the request's
 * id here as locally (`req_<UUID v7>`, its time then random bits), not API Gateway's (a random
 * UUID): a call whose id carries its time is found from the id alone, so its trace needs no index
 * entry of its own, a write less a call (docs/traces.md, "Where a trace is"). API Gateway's id is
 * kept beside it, for the call's log line and the operator's error line, so its access log's line
 * is still found.
 */
export function edgeContext(event: APIGatewayProxyEvent): EdgeContext {
  return {
    requestId: newRequestId(),
    gatewayRequestId: event.requestContext?.requestId || undefined,
    address: event.requestContext?.identity?.sourceIp ?? '',
    bodyBuffered: true,
  };
}

/**
 * The event's request. Its path is the API resource's template filled with the event's (decoded)
 * path parameters, not `event.path`, which carries a custom domain's base path when the API is
 * mapped under one; the edge matches it again (route-matcher.ts).
 */
export function toRequest(event: APIGatewayProxyEvent): Request {
  const headers = new Headers();
  const multi = event.multiValueHeaders;
  for (const [name, values] of Object.entries(multi && Object.keys(multi).length > 0 ? multi : {})) {
    // A header that may be given once keeps its first value, as Node's parser keeps it for the
    // local platform: a repeated Authorization or Content-Type reads the same on both deployments.
    const kept = SINGLE_VALUED.has(name.toLowerCase()) ? (values ?? []).slice(0, 1) : (values ?? []);
    for (const value of kept) append(headers, name, value);
  }
  if (!multi || Object.keys(multi).length === 0) {
    for (const [name, value] of Object.entries(event.headers ?? {}))
      if (value !== undefined) append(headers, name, value);
  }
  const query = new URLSearchParams();
  if (event.multiValueQueryStringParameters) {
    for (const [k, values] of Object.entries(event.multiValueQueryStringParameters))
      for (const v of values ?? []) query.append(k, v);
  } else {
    for (const [k, v] of Object.entries(event.queryStringParameters ?? {}))
      if (v !== undefined) query.append(k, v);
  }
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const url = new URL(`http://localhost${resourcePath(event)}${search}`);
  const method = event.httpMethod.toUpperCase();
  const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : undefined;
  return fetchRequest(url, method, headers, body && body.length > 0 ? body : undefined);
}

function resourcePath(event: APIGatewayProxyEvent): string {
  const params = event.pathParameters ?? {};
  let complete = true;
  const filled = (event.resource ?? '').replace(/\{(\w+)(\+?)\}/g, (_, name: string, greedy: string) => {
    const value = params[name];
    if (value === undefined) complete = false;
    // A greedy parameter (`{proxy+}`) holds several segments: each is encoded, not the slashes.
    return greedy
      ? (value ?? '').split('/').map(encodeURIComponent).join('/')
      : encodeURIComponent(value ?? '');
  });
  return complete && filled.startsWith('/') ? filled : (event.path ?? '/');
}

/** The request headers Node keeps the first value of when repeated (http.IncomingMessage.headers). */
const SINGLE_VALUED = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

function append(headers: Headers, name: string, value: string): void {
  try {
    headers.append(name, value);
  } catch {
    // A value the Fetch API refuses: the request goes on without it.
  }
}

/** The Response as API Gateway's proxy result: a binary media type's body base64-encoded. */
export async function toResult(response: Response): Promise<APIGatewayProxyResult> {
  const parts = responseParts(response);
  if (parts) {
    const headers = distinctHeaders(parts.headers);
    const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    const binary = carriedAsBase64(contentType);
    const bytes = typeof parts.body === 'string' && !binary ? undefined : Buffer.from(parts.body ?? '');
    return {
      statusCode: parts.status,
      headers,
      body: bytes ? bytes.toString(binary ? 'base64' : 'utf8') : (parts.body as string),
      isBase64Encoded: binary,
    };
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  const bytes = Buffer.from(await response.arrayBuffer());
  const binary = carriedAsBase64(response.headers.get('content-type') ?? undefined);
  return {
    statusCode: response.status,
    headers,
    ...(cookies.length > 0 ? { multiValueHeaders: { 'set-cookie': cookies } } : {}),
    body: bytes.toString(binary ? 'base64' : 'utf8'),
    isBase64Encoded: binary,
  };
}
