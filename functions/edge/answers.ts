import { lazyResponse } from './lazy-response.ts';

/*
 * The answers an operation builds itself when its route's JSON body is not the whole answer: JSON
 * with headers of its own, a page, a stream of Server-Sent Events, a protocol's own answer. Each is
 * a Response; the edge adds the headers every answer carries after the operation, where the
 * answer has not set them (answer-mapping.ts). An operation that returns its route's body instead
 * gets the route's status and the JSON envelope; that keeps the body checked against the route's
 * schema at compile time (operations.ts).
 */

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON body with `metadata.request_id` added (a route marked `document` is sent as is). */
export function jsonBody(body: unknown, requestId: string, document = false): string | null {
  return JSON.stringify(document ? body : withMetadata(body, requestId)) ?? null;
}

/** A JSON answer with headers of its own (a deprecated version's Deprecation, Sunset, Link …). */
export function jsonAnswer(
  body: unknown,
  requestId: string,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  return lazyResponse(jsonBody(body, requestId), init.status ?? 200, {
    'Content-Type': JSON_TYPE,
    ...init.headers,
  });
}

/** A page instead of JSON (the local checkout page): sent as it is, with nothing else allowed to load. */
export function htmlAnswer(html: string, status = 200): Response {
  return lazyResponse(html, status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  });
}

/** Server-Sent Events (a streamed call, an MCP tool call with progress), sent as they are written. */
export function sseAnswer(
  stream: ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Response {
  return new Response(stream, {
    status: 200,
    headers: {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      // Proxies that buffer answers (nginx) pass this one on as it is written.
      'X-Accel-Buffering': 'no',
    },
  });
}

/** A protocol's own answer (MCP's JSON-RPC): its status, headers and body as they are. */
export function protocolAnswer(status: number, headers: Record<string, string>, body: string): Response {
  return lazyResponse(body, status, headers);
}

function withMetadata(body: unknown, requestId: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const existing = (body as { metadata?: Record<string, unknown> }).metadata;
  return { ...body, metadata: { ...(existing ?? {}), request_id: requestId } };
}
