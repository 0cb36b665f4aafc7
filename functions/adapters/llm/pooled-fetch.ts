import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { Agent, interceptors, request } from 'undici';
import { answerResponse, headerRecord, type ModelAnswer } from './model-transport.ts';

/**
 * Decoders for a compressed answer, as the global fetch decodes it (whether or not it was asked
 * for). Written here rather than with undici's decompress interceptor, which is experimental and
 * prints a warning on the server's stderr. The output is bounded: a small compressed answer must
 * not expand into all of memory.
 */
const MAX_DECODED_BYTES = 256 * 1024 * 1024;
const DECODERS: Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/**
 * A `fetch` for the AI SDK's providers on the local platform, built on undici's request API over
 * one keep-alive pool, instead of Node's global fetch.
 *
 * Why: the global fetch wraps every request and response body in web streams and its own Request
 * and Response machinery, which cost about a fifth of the platform's CPU per prompt call in the
 * gateway bench (docs/performance.md). undici's request API hands the body over as a Node stream;
 * the answer is read whole (the SDK reads every non-streamed answer whole anyway) and handed to the
 * SDK as a Response over those bytes.
 *
 * It keeps what the SDK relies on from fetch (test/adapters/pooled-fetch.test.ts runs each case through
 * both): an abort through `init.signal` rejects with an AbortError; an unreachable host rejects
 * with `TypeError('fetch failed', { cause })`, which the SDK reports as "Cannot connect to API";
 * redirects are followed and compressed answers decoded. It does not ask for compression (the
 * global fetch sends Accept-Encoding): a model's JSON answer is small, and decoding costs CPU.
 * Bodies other than a string or bytes (the SDK sends JSON strings; a FormData upload would be one)
 * go to the global fetch.
 *
 * Only the local composition uses it: in a Lambda the bundle would carry undici (about 300 KB),
 * and a Lambda serves one call at a time, so its fetch is the runtime's own.
 */
export function createPooledFetch(send: PooledTransport = createPooledTransport()): typeof fetch {
  return async (input, init) => {
    const body = init?.body;
    if (
      input instanceof Request ||
      (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
    )
      return fetch(input, init);
    const url = typeof input === 'string' ? input : input.href;
    const answer = await send(url, {
      method: init?.method ?? 'GET',
      headers: headerRecord(init?.headers),
      body: body ?? undefined,
      signal: init?.signal ?? undefined,
    });
    return answerResponse(answer);
  };
}

/**
 * The pooled client itself: one keep-alive undici pool, the answer read whole (and decoded).
 * The platform's own prompt calls (`generate` in ai-sdk-gateway.ts) send through it with no Request,
 * Response or Headers objects at all; the fetch above wraps it for the AI SDK.
 */
export function createPooledTransport(): PooledTransport {
  // As the global fetch does: redirects followed (a custom base URL behind a proxy may answer 307),
  // and no cap on connections per origin.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 }).compose(
    interceptors.redirect({ maxRedirections: 20 }),
  );
  return async (url, init) => {
    const signal = init.signal;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: (init.method ?? 'POST') as 'POST',
        headers: init.headers,
        body: init.body,
        signal,
        dispatcher,
      });
    } catch (error) {
      throw fetchError(error, signal);
    }
    const encoding = String(res.headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase();
    const decode = encoding ? DECODERS[encoding] : undefined;
    let bytes: Buffer = Buffer.alloc(0);
    let bodyError: unknown;
    try {
      bytes = Buffer.from(await res.body.arrayBuffer());
      if (decode) bytes = await decode(bytes, { maxOutputLength: MAX_DECODED_BYTES });
    } catch (error) {
      if (signal?.aborted) throw fetchError(error, signal);
      // As fetch: the answer's status and headers stand, and its body fails to read.
      bodyError = new TypeError('terminated', { cause: error });
    }
    const headers = res.headers;
    if (decode) {
      // A decoded body's encoding and length are no longer the header's.
      delete headers['content-encoding'];
      delete headers['content-length'];
    }
    return { status: res.statusCode, headers, bytes, ...(bodyError === undefined ? {} : { bodyError }) };
  };
}

/** The pooled client: a ModelTransport that also sends other methods and bodies (for fetch). */
export type PooledTransport = (
  url: string,
  init: {
    method?: string;
    headers: Record<string, string>;
    body: string | Uint8Array | undefined;
    signal: AbortSignal | undefined;
  },
) => Promise<ModelAnswer>;

/** What fetch would have thrown: the signal's reason (an AbortError) or `TypeError('fetch failed')`. */
function fetchError(error: unknown, signal: AbortSignal | null | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
  return new TypeError('fetch failed', { cause: error });
}
