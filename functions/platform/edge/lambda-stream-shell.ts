import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { FetchHandler } from './edge-context.ts';
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

/** Lambda's runtime global, present only inside Lambda's Node.js runtime. */
const runtime = (globalThis as unknown as { awslambda?: LambdaRuntimeGlobal }).awslambda;

/** The eight NUL bytes between the prelude and the body. */
export const PRELUDE_DELIMITER = new Uint8Array(8);

export type StreamedApiHandler = (event: APIGatewayProxyEvent, responseStream: Writable) => Promise<void>;

export function lambdaStreamShell(app: FetchHandler): StreamedApiHandler {
  const handler: StreamedApiHandler = async (event, responseStream) => {
    const work: Promise<unknown>[] = [];
    const response = await app(toRequest(event), edgeContext(event), { waitUntil: (p) => void work.push(p) });
    const out = withPrelude(responseStream, prelude(response));
    try {
      if (response.body) {
        for await (const chunk of response.body) {
          if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
        }
      }
    } finally {
      await new Promise<void>((resolve) => out.end(resolve));
    }
    await Promise.allSettled(work);
  };
  return runtime ? runtime.streamifyResponse(handler) : handler;
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
  if (runtime) return runtime.HttpResponseStream.from(stream, head);
  stream.write(Buffer.from(JSON.stringify(head)));
  stream.write(PRELUDE_DELIMITER);
  return stream;
}
