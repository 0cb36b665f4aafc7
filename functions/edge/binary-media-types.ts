import { routeList } from '../platform/routes.ts';

/*
 * The API's binary media types: the bodies API Gateway hands a function base64-encoded. The stack
 * declares them (lib/stateless-stack.ts) and the local server counts a body of these types as
 * base64 against the event budget (event-body-budget.ts), so both count a body alike.
 */

/** Every non-JSON content type a route takes as its raw body. */
export function binaryMediaTypes(): string[] {
  const types = new Set<string>();
  // JSON stays text: listing it would make API Gateway base64-encode every JSON body of every route.
  for (const [, route] of routeList)
    for (const type of route.binaryBody?.contentTypes ?? []) if (!/json/i.test(type)) types.add(type);
  return [...types].sort();
}

const BINARY = new Set(binaryMediaTypes().map((t) => t.toLowerCase()));

/** Whether API Gateway passes a body of this Content-Type as base64 (its media type, parameters aside). */
export function carriedAsBase64(contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return BINARY.has(type);
}
