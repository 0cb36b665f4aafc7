import type { APIGatewayProxyEvent } from 'aws-lambda';

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
