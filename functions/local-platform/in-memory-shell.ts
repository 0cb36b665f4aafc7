import type { FetchHandler } from '../edge/edge-context.ts';
import type { Logger } from '../shared/logger.ts';
import { newRequestId } from '../shared/request-ids.ts';

/*
 * The app called with a Request and no socket (Hono's `app.request()`): what a test that needs the
 * app and not the transport calls, so that it opens no server. It keeps the shells' contract
 * (edge-context.ts): a request id minted per request, the client's address, work handed to
 * waitUntil seen through before the answer is returned (as a Lambda does, and as the Node shell
 * does where it may not answer first), the onDelivered work run once the answer's body has been
 * read whole or cancelled, and a client's abort (its Request's signal) cancelling the answer's
 * body as a hang-up on a socket does. What is about sockets (a connection's cap, lingering closes,
 * unread answers) is the Node shell's alone and is tested there (test/edge/).
 */

export type InMemoryFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface InMemoryOptions {
  /** Where the relative URLs of the requests point (the platform's public URL). */
  base: string;
  /** The client's address the app sees (the Node shell's socket peer). */
  address?: string;
  /** What wraps each request (the embedded store's one look per request, as the Node shell does). */
  around?: <T>(handle: () => Promise<T>) => Promise<T>;
  logger: Logger;
}

export function inMemoryShell(app: FetchHandler, options: InMemoryOptions): InMemoryFetch {
  const address = options.address ?? '127.0.0.1';
  const settle = async (work: Promise<unknown>[]) => {
    for (const outcome of await Promise.allSettled(work)) {
      if (outcome.status === 'rejected') {
        options.logger.error('work after an answer failed', { error: String(outcome.reason) });
      }
    }
  };
  return async (input, init) => {
    const request =
      input instanceof Request
        ? init
          ? new Request(input, init)
          : input
        : new Request(new URL(String(input), options.base), init);
    const held: Promise<unknown>[] = [];
    const delivered: (() => Promise<unknown>)[] = [];
    const handle = async () => {
      const response = await app(
        request,
        { requestId: newRequestId(), address },
        { waitUntil: (work) => void held.push(work), onDelivered: (run) => void delivered.push(run) },
      );
      if (held.length > 0) await settle(held.splice(0));
      return response;
    };
    const response = await (options.around ? options.around(handle) : handle());
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await settle([...delivered.map((run) => run()), ...held.splice(0)]);
    };
    if (!response.body) {
      await release();
      return response;
    }
    // A client's abort reaches the app as a socket's hang-up does: its answer's body is cancelled
    // (a streamed call stops). Delivered once the reader has had the last byte, or has gone.
    const reader = response.body.getReader();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const hangUp = () => {
      void reader.cancel(request.signal.reason).catch(() => undefined);
      controller.error(request.signal.reason);
      void release();
    };
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        if (request.signal.aborted) hangUp();
        else request.signal.addEventListener('abort', hangUp, { once: true });
      },
      async pull(c) {
        const { done, value } = await reader.read();
        if (done) {
          request.signal.removeEventListener('abort', hangUp);
          c.close();
          await release();
        } else c.enqueue(value);
      },
      async cancel(reason) {
        request.signal.removeEventListener('abort', hangUp);
        await reader.cancel(reason);
        await release();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}
