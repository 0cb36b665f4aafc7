/*
 * A Fetch API Request for what a client actually sent. The Fetch API will not build a GET or HEAD
 * with a body, nor a CONNECT, TRACE or TRACK at all, but a client may send them, and the edge
 * must answer them as it answers any request (a body a route does not take is still read within
 * its bound and refused past it: serve-route.ts). Such a request is built with a method the Fetch
 * API takes and reports the method that was sent, as @hono/node-server does for TRACE.
 */

const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

export function fetchRequest(
  url: URL,
  method: string,
  headers: Headers,
  body: ReadableStream<Uint8Array> | Uint8Array | undefined,
): Request {
  const bodiless = method === 'GET' || method === 'HEAD' || FORBIDDEN_METHODS.has(method);
  if (!bodiless) {
    return new Request(url, { method, headers, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit);
  }
  const built = body
    ? new Request(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
    : new Request(url, { method: 'GET', headers });
  if (built.method !== method) Object.defineProperty(built, 'method', { value: method });
  return built;
}
