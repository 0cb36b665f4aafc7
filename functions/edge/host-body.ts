/*
 * A host's own way to read a request's body, offered beside the Fetch API's stream: the Node
 * shell's request hands each chunk Node parsed straight to the reader (node-request.ts), with
 * none of a web ReadableStream's objects and promises (its controller, queue, reader, a promise a
 * chunk), which a call's small JSON body paid for every call. The body reading (body-reading.ts)
 * takes it where a request offers it and the body is read whole in memory; a request without it
 * (a Lambda's, a test's) is read from its stream.
 */

/** The key under which a request offers its host's reading (a symbol: no Fetch API name). */
export const hostBody = Symbol('hostBody');

/**
 * The method a request offers under `hostBody`: reads the body, handing each chunk to `take` as it
 * comes, until the body ends (resolves true) or `take` answers false (resolves false: the rest is
 * left unread, as a cancelled stream's is). Rejects when the body fails before its end (the client
 * went away). Undefined when the request's body stream was taken already: read that instead.
 * Once it has begun, the request's `body` is null: its chunks went to `take`.
 */
export type HostBodyReading = (take: (chunk: Buffer) => boolean) => Promise<boolean> | undefined;

/** Reads `request`'s body through its host's reading (see HostBodyReading); undefined where it offers none. */
export function readHostBody(
  request: Request,
  take: (chunk: Buffer) => boolean,
): Promise<boolean> | undefined {
  const offered = (request as { [hostBody]?: HostBodyReading })[hostBody];
  return typeof offered === 'function' ? offered.call(request, take) : undefined;
}
