/**
 * Where a shell that parsed the request's URL already keeps it on the Request it builds (the Node
 * shell's lazy Request: node-request.ts), so the app parses each request's URL once.
 */
export const parsedUrl = Symbol('parsedUrl');

/** The request's URL as an object: the one its shell parsed, else parsed from `request.url`. */
export function requestUrlOf(request: Request): URL {
  return (request as unknown as { [parsedUrl]?: URL })[parsedUrl] ?? new URL(request.url);
}
