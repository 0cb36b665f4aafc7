import { logServerError } from '../shared/server-error-log.ts';
import { preflightHeaders } from './cors.ts';
import type { RequestScope } from './edge-context.ts';
import { lazyResponse } from './lazy-response.ts';
import { HtmlReply, PreflightReply, ProtocolReply, Reply, StreamReply } from './operation-replies.ts';
import { responseHeaders } from './response-headers.ts';

/*
 * The one place an operation's result becomes an answer: its route's success status, the JSON
 * body with `metadata.request_id` (a route marked `document` is sent as is), and the headers of
 * every answer. The other shapes an operation may return are in operation-replies.ts.
 */

export async function answer(
  scope: RequestScope,
  result: unknown,
  request: { method: string; path: string; header: (name: string) => string | undefined },
): Promise<Response> {
  const status = scope.route?.def.success.status ?? 200;
  if (result instanceof PreflightReply) {
    return lazyResponse(null, 204, {
      ...(await responseHeaders(scope)),
      Allow: result.methods.join(', '),
      ...preflightHeaders(
        scope.deps.config.corsOrigins,
        scope.origin,
        result.methods,
        request.header('access-control-request-headers'),
      ),
    });
  }
  if (result instanceof ProtocolReply) {
    // The protocol's own headers win, whatever their case (Content-Type, content-type).
    const own = new Set(Object.keys(result.headers).map((k) => k.toLowerCase()));
    const common = Object.entries(await responseHeaders(scope)).filter(([k]) => !own.has(k.toLowerCase()));
    logServerError(scope.deps.logger, {
      requestId: scope.requestId,
      gatewayRequestId: scope.gatewayRequestId,
      method: request.method,
      route: scope.route?.def.path ?? request.path,
      status: result.status,
      code: undefined,
    });
    return lazyResponse(result.body, result.status, { ...Object.fromEntries(common), ...result.headers });
  }
  if (result instanceof StreamReply) {
    return new Response(result.stream, {
      status: 200,
      headers: {
        ...(await responseHeaders(scope)),
        ...result.headers,
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache',
        // Proxies that buffer answers (nginx) pass this one on as it is written.
        'X-Accel-Buffering': 'no',
      },
    });
  }
  if (result instanceof HtmlReply) {
    return lazyResponse(result.html, status, {
      ...(await responseHeaders(scope)),
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    });
  }
  const body = result instanceof Reply ? result.body : result;
  const headers = { ...(await responseHeaders(scope)), ...(result instanceof Reply ? result.headers : {}) };
  if (status === 204) return lazyResponse(null, status, headers);
  const json = JSON.stringify(scope.route?.def.document ? body : withMetadata(body, scope.requestId));
  return lazyResponse(json ?? null, status, headers);
}

function withMetadata(body: unknown, requestId: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const existing = (body as { metadata?: Record<string, unknown> }).metadata;
  return { ...body, metadata: { ...(existing ?? {}), request_id: requestId } };
}
