// @ts-check: type-checked with the project (tsconfig.json allows JavaScript; this line opts it in).
/**
 * The runtime inside one emulated Lambda instance (a child process of the emulator, forked by
 * lambda-host.ts with the function's asset as its working directory and the template's
 * environment as its whole environment). It imports the handler file as Lambda's Node runtime does
 * (`<file>.mjs`, else `.js`/`.cjs`), then runs one event at a time as the host sends them over
 * IPC and answers with the handler's result or its error. Imports nothing of the project: the
 * function sees only its own asset, as on Lambda.
 *
 * JavaScript, not TypeScript, as Lambda's own runtime is: a `.ts` file here made every instance
 * load Node's type stripper before the handler (about 0.08 CPU-s a cold start, a cost no Lambda
 * instance has, counted in its INIT phase); the types are in JSDoc instead.
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

/**
 * @typedef {object} InvokeMessage
 * @property {number} id
 * @property {unknown} event
 * @property {true} [stream] Stream the response (InvokeWithResponseStream).
 * @property {{ awsRequestId: string, deadlineMs: number, functionName: string, invokedFunctionArn: string, memoryLimitInMB: string }} context
 */

const [assetDir, handlerSpec] = /** @type {[string, string]} */ (process.argv.slice(2));
const dot = handlerSpec.lastIndexOf('.');
const file = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

/** @param {unknown} message @returns {Promise<void>} */
const send = (message) =>
  new Promise((resolve) => {
    process.send?.(message, undefined, {}, () => resolve());
  });

const STREAMING = Symbol('streaming');
/** @typedef {((event: unknown, second: unknown, context?: unknown) => unknown) & { [STREAMING]?: true }} Handler */
/** @type {Record<string, unknown>} */ (globalThis).awslambda = {
  /** @param {Handler} handler @returns {Handler} */
  streamifyResponse(handler) {
    handler[STREAMING] = true;
    return handler;
  },
  HttpResponseStream: {
    /** @param {Writable} stream @param {unknown} prelude @returns {Writable} */
    from(stream, prelude) {
      stream.write(Buffer.from(JSON.stringify(prelude)));
      stream.write(new Uint8Array(8));
      return stream;
    },
  },
};

/** Streams in progress, by invocation id: the host may end one (the client went away). @type {Map<number, Writable>} */
const responseStreams = new Map();

/**
 * The response stream of a streaming handler: each chunk to the host, or kept for a buffered answer.
 * @param {InvokeMessage} message @param {Buffer[]} kept @returns {Writable}
 */
function responseStream(message, kept) {
  const out = new Writable({
    write(chunk, _encoding, done) {
      if (message.stream) send({ id: message.id, chunk }).then(() => done());
      else {
        kept.push(chunk);
        done();
      }
    },
    // The handler ended its stream: the client's answer is whole, though the invocation may go on
    // (work after the answer, which Lambda runs until the handler returns).
    final(done) {
      if (message.stream) send({ id: message.id, streamEnd: true }).then(() => done());
      else done();
    },
  });
  responseStreams.set(message.id, out);
  out.once('close', () => responseStreams.delete(message.id));
  return out;
}

/** @returns {Promise<void>} */
async function main() {
  const path = ['.mjs', '.js', '.cjs'].map((ext) => join(assetDir, `${file}${ext}`)).find(existsSync);
  if (!path) throw new Error(`Runtime.ImportModuleError: Cannot find module '${file}'`);
  /** @type {Record<string, unknown>} */
  const mod = await import(pathToFileURL(path).href);
  const handler = /** @type {Handler} */ (mod[exportName]);
  if (typeof handler !== 'function') {
    throw new Error(`Runtime.HandlerNotFound: ${file}.${exportName} is undefined or not exported`);
  }
  process.on('message', (/** @type {InvokeMessage | { abort: number }} */ message) => {
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
    const streaming = handler[STREAMING] === true;
    /** @type {Buffer[]} */
    const kept = [];
    Promise.resolve()
      .then(() =>
        streaming
          ? handler(message.event, responseStream(message, kept), context)
          : handler(message.event, context),
      )
      .then(
        (result) =>
          send({
            id: message.id,
            result: streaming && !message.stream ? Buffer.concat(kept).toString('utf8') : (result ?? null),
            maxRssKb: process.resourceUsage().maxRSS,
          }),
        (/** @type {unknown} */ err) => {
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

main().catch(async (/** @type {unknown} */ err) => {
  const e = err instanceof Error ? err : new Error(String(err));
  console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message, stack: e.stack }));
  await send({ initError: { errorType: e.name, errorMessage: e.message } });
  process.exit(1);
});
