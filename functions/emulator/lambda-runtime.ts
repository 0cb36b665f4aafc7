/**
 * The runtime inside one emulated Lambda instance (a child process of the emulator, forked by
 * lambda-host.ts with the function's asset as its working directory and the template's
 * environment as its whole environment). It imports the handler file as Lambda's Node runtime does
 * (`<file>.mjs`, else `.js`/`.cjs`), then runs one event at a time as the host sends them over
 * IPC and answers with the handler's result or its error. Imports nothing of the project: the
 * function sees only its own asset, as on Lambda.
 *
 * Response streaming (InvokeWithResponseStream, for API Gateway's STREAM integrations): as Lambda's
 * Node runtime does, the `awslambda` global offers `streamifyResponse`, which marks a handler as
 * streaming, and `HttpResponseStream.from`, which writes the HTTP prelude (status, headers as JSON)
 * and its eight NUL bytes before the body. A streaming handler invoked with `stream` writes to a
 * response stream whose chunks go to the host as they are written; invoked without, its bytes are
 * answered whole, as Lambda buffers them.
 *
 * Each answer carries the process's peak resident set (what Lambda's REPORT line gives as "Max
 * Memory Used"), for the deployment's meter.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

interface InvokeMessage {
  id: number;
  event: unknown;
  /** Stream the response (InvokeWithResponseStream). */
  stream?: true;
  context: {
    awsRequestId: string;
    deadlineMs: number;
    functionName: string;
    invokedFunctionArn: string;
    memoryLimitInMB: string;
  };
}

const [assetDir, handlerSpec] = process.argv.slice(2) as [string, string];
const dot = handlerSpec.lastIndexOf('.');
const file = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

const send = (message: unknown) =>
  new Promise<void>((resolve) => {
    process.send?.(message, undefined, {}, () => resolve());
  });

const STREAMING = Symbol('streaming');
type Handler = ((event: unknown, second: unknown, context?: unknown) => unknown) & { [STREAMING]?: true };
(globalThis as Record<string, unknown>).awslambda = {
  streamifyResponse(handler: Handler): Handler {
    handler[STREAMING] = true;
    return handler;
  },
  HttpResponseStream: {
    from(stream: Writable, prelude: unknown): Writable {
      stream.write(Buffer.from(JSON.stringify(prelude)));
      stream.write(new Uint8Array(8));
      return stream;
    },
  },
};

/** Streams in progress, by invocation id: the host may end one (the client went away). */
const responseStreams = new Map<number, Writable>();

/** The response stream of a streaming handler: each chunk to the host, or kept for a buffered answer. */
function responseStream(message: InvokeMessage, kept: Buffer[]): Writable {
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (message.stream) send({ id: message.id, chunk }).then(() => done());
      else {
        kept.push(chunk);
        done();
      }
    },
  });
  responseStreams.set(message.id, out);
  out.once('close', () => responseStreams.delete(message.id));
  return out;
}

async function main(): Promise<void> {
  const path = ['.mjs', '.js', '.cjs'].map((ext) => join(assetDir, `${file}${ext}`)).find(existsSync);
  if (!path) throw new Error(`Runtime.ImportModuleError: Cannot find module '${file}'`);
  const mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const handler = mod[exportName];
  if (typeof handler !== 'function') {
    throw new Error(`Runtime.HandlerNotFound: ${file}.${exportName} is undefined or not exported`);
  }
  process.on('message', (message: InvokeMessage | { abort: number }) => {
    if ('abort' in message) {
      responseStreams.get(message.abort)?.destroy(new Error('The client closed the connection'));
      return;
    }
    const context = {
      ...message.context,
      functionVersion: '$LATEST',
      logGroupName: `/aws/lambda/${message.context.functionName}`,
      logStreamName: `emulated/${process.pid}`,
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, message.context.deadlineMs - Date.now()),
    };
    const streaming = (handler as Handler)[STREAMING] === true;
    const kept: Buffer[] = [];
    Promise.resolve()
      .then(() =>
        streaming
          ? (handler as Handler)(message.event, responseStream(message, kept), context)
          : (handler as Handler)(message.event, context),
      )
      .then(
        (result) =>
          send({
            id: message.id,
            result: streaming && !message.stream ? Buffer.concat(kept).toString('utf8') : (result ?? null),
            maxRssKb: process.resourceUsage().maxRSS,
          }),
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          // What Lambda logs and reports for an unhandled error.
          console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message, stack: e.stack }));
          return send({
            id: message.id,
            error: { errorType: e.name, errorMessage: e.message },
            maxRssKb: process.resourceUsage().maxRSS,
          });
        },
      );
  });
  await send({ ready: true, maxRssKb: process.resourceUsage().maxRSS });
}

main().catch(async (err: unknown) => {
  const e = err instanceof Error ? err : new Error(String(err));
  console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message, stack: e.stack }));
  await send({ initError: { errorType: e.name, errorMessage: e.message } });
  process.exit(1);
});
