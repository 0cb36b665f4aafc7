import { logServerError } from '../shared/server-error-log.ts';
import { jsonBody } from './answers.ts';
import type { RequestScope } from './edge-context.ts';
import { lazyResponse, responseParts } from './lazy-response.ts';
import { responseHeaders } from './response-headers.ts';

/*
 * The one place an operation's result becomes an answer. An operation returns its route's body
 * (sent as JSON with the route's success status and `metadata.request_id`) or a Response it built
 * (answers.ts). Either way the headers every answer carries (content type, no caching, the request
 * id, CORS, the rate limits: response-headers.ts) are added here, after the operation, where the
 * answer has not set its own; and a server error it answers is logged as error-mapping.ts logs one.
 */

export async function answer(
  scope: RequestScope,
  result: unknown,
  request: { method: string; path: string },
): Promise<Response> {
  const common = await responseHeaders(scope);
  if (result instanceof Response) {
    logServerError(scope.deps.logger, {
      requestId: scope.requestId,
      gatewayRequestId: scope.gatewayRequestId,
      method: request.method,
      route: scope.route?.def.path ?? request.path,
      status: result.status,
      code: undefined,
    });
    return withHeaders(result, common);
  }
  const status = scope.route?.def.success.status ?? 200;
  if (status === 204) return lazyResponse(null, status, common);
  return lazyResponse(jsonBody(result, scope.requestId, scope.route?.def.document), status, common);
}

/** `response` with each of `common` it does not set itself, whatever the case of its own names. */
function withHeaders(response: Response, common: Record<string, string>): Response {
  const parts = responseParts(response);
  if (parts) {
    // A few names an answer: a look along them costs less than a set of them.
    const own = Object.keys(parts.headers);
    for (let i = 0; i < own.length; i++) own[i] = (own[i] as string).toLowerCase();
    const added: Record<string, string> = {};
    for (const name in common) if (!own.includes(name.toLowerCase())) added[name] = common[name] as string;
    parts.headers = { ...added, ...parts.headers };
    return response;
  }
  const missing = Object.keys(common).filter((name) => !response.headers.has(name));
  if (missing.length === 0) return response;
  try {
    // A Response an operation built is its own: its headers may be added to.
    for (const name of missing) response.headers.set(name, common[name] as string);
    return response;
  } catch {
    // Headers the Fetch API made immutable (Response.redirect, a fetch's answer): a copy takes them.
    const headers = new Headers(response.headers);
    for (const name of missing) headers.set(name, common[name] as string);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
