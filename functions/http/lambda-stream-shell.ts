import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { FetchHandler } from '../edge/edge-context.ts';
import { edgeContext, toRequest } from './lambda-shell.ts';

/*
 * The streamed Lambda shell: the same app as lambda-shell.ts, its Response written to Lambda's
 * response stream as it comes (API Gateway's response streaming, ResponseTransferMode STREAM):
 * first the prelude (status, headers and cookies as JSON), then eight NUL bytes, then the body.
 * In Lambda the runtime's `awslambda.HttpResponseStream.from` writes that prelude; elsewhere (the
 * emulator, tests) the shell writes the same bytes itself.
 */

interface Prelude {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
}

interface LambdaRuntimeGlobal {
  streamifyResponse<H>(handler: H): H;
  HttpResponseStream: { from(stream: Writable, prelude: Prelude): Writable };
}

/**
 * Lambda's runtime global, inside Lambda's Node.js runtime (and the emulator's). Elsewhere the AWS
 * SDK may define an `awslambda` object of its own (@aws/lambda-invoke-store), without these.
 * @types/aws-lambda declares the global as always there: read as what may be, then checked.
 */
function lambdaRuntime(): LambdaRuntimeGlobal | undefined {
  const global: { streamifyResponse?: unknown; HttpResponseStream?: { from?: unknown } } | undefined =
    globalThis.awslambda;
  return typeof global?.streamifyResponse === 'function' &&
    typeof global.HttpResponseStream?.from === 'function'
    ? (global as LambdaRuntimeGlobal)
    : undefined;
}

/** The eight NUL bytes between the prelude and the body. */
export const PRELUDE_DELIMITER = new Uint8Array(8);

export type StreamedApiHandler = (event: APIGatewayProxyEvent, responseStream: Writable) => Promise<void>;

/** `finish`: what the function does last, after the answer's stream closed (lambda-shell.ts). */
export function lambdaStreamShell(app: FetchHandler, finish?: () => Promise<void>): StreamedApiHandler {
  const handler: StreamedApiHandler = async (event, responseStream) => {
    const work: Promise<unknown>[] = [];
    // Run once the stream has ended or its client is gone (a streamed call's slot's release).
    const delivered: (() => Promise<unknown>)[] = [];
    const response = await app(toRequest(event), edgeContext(event), {
      waitUntil: (p) => void work.push(p),
      onDelivered: (run) => void delivered.push(run),
    });
    const out = withPrelude(responseStream, prelude(response));
    const reader = response.body?.getReader();
    // A client gone (API Gateway closed the stream) cancels the body at once, not at the next
    // write: a streamed call stops when its stream is cancelled (streamed-call.ts).
    const cancel = () => void reader?.cancel().catch(() => undefined);
    out.once('close', cancel).once('error', cancel);
    try {
      // The next chunk is read only once the stream has taken the last: a streamed call's events
      // (and its model's stream) wait for API Gateway, which waits for the client.
      for (;;) {
        const read = await (reader?.read() ?? { done: true as const, value: undefined });
        if (read.done || out.destroyed) break;
        if (!out.write(read.value)) await drained(out);
      }
    } catch {
      // The body failed or was cancelled: what was written stands, the stream ends below.
    }
    // The answer ends once the work it left is done (a call's record, its log line with its trace,
    // the charge of its bytes), as the buffered shell's and the Node shell's do: a client that reads
    // right after its answer (the call's trace, its usage) finds what the call wrote. Ended first, a
    // read racing the commit answered 404 for a trace the answer had just named.
    await Promise.allSettled(work);
    if (!out.destroyed)
      await new Promise<void>((resolve) => {
        out.once('close', resolve);
        out.end(resolve);
      });
    work.push(...delivered.map((run) => run()));
    await Promise.allSettled(work);
    await finish?.().catch(() => undefined);
  };
  const runtime = lambdaRuntime();
  return runtime ? runtime.streamifyResponse(handler) : handler;
}

/** Resolves once `out` has taken what it was given, or closed (one listener each, removed after). */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done).off('close', done);
      resolve();
    };
    out.on('drain', done).on('close', done);
  });
}

function prelude(response: Response): Prelude {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  return { statusCode: response.status, headers, ...(cookies.length > 0 ? { cookies } : {}) };
}

function withPrelude(stream: Writable, head: Prelude): Writable {
  const runtime = lambdaRuntime();
  if (runtime) return runtime.HttpResponseStream.from(stream, head);
  stream.write(Buffer.from(JSON.stringify(head)));
  stream.write(PRELUDE_DELIMITER);
  return stream;
}
