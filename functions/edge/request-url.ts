/**
 * Where a shell that parsed the request's URL already keeps it on the Request it builds (the Node
 * shell's lazy Request: node-request.ts), so the app parses each request's URL once.
 */
export const parsedUrl = Symbol('parsedUrl');

/** The request's URL as an object: the one its shell parsed, else parsed from `request.url`. */
export function requestUrlOf(request: Request): URL {
  // `in` narrows the Request to one with the key; its value is checked rather than asserted.
  const parsed = parsedUrl in request ? request[parsedUrl] : undefined;
  return parsed instanceof URL ? parsed : new URL(request.url);
}
