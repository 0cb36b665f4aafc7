/**
 * The runtime inside one emulated Lambda instance (a child process of the emulator, forked by
 * lambda-host.ts with the function's asset as its working directory and the template's
 * environment as its whole environment). It imports the handler file as Lambda's Node runtime does
 * (`<file>.mjs`, else `.js`/`.cjs`), then runs one event at a time as the host sends them over
 * IPC and answers with the handler's result or its error. Imports nothing of the project: the
 * function sees only its own asset, as on Lambda.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface InvokeMessage {
  id: number;
  event: unknown;
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

async function main(): Promise<void> {
  const path = ['.mjs', '.js', '.cjs'].map((ext) => join(assetDir, `${file}${ext}`)).find(existsSync);
  if (!path) throw new Error(`Runtime.ImportModuleError: Cannot find module '${file}'`);
  const mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const handler = mod[exportName];
  if (typeof handler !== 'function') {
    throw new Error(`Runtime.HandlerNotFound: ${file}.${exportName} is undefined or not exported`);
  }
  process.on('message', (message: InvokeMessage) => {
    const context = {
      ...message.context,
      functionVersion: '$LATEST',
      logGroupName: `/aws/lambda/${message.context.functionName}`,
      logStreamName: `emulated/${process.pid}`,
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, message.context.deadlineMs - Date.now()),
    };
    Promise.resolve()
      .then(() => (handler as (e: unknown, c: unknown) => unknown)(message.event, context))
      .then(
        (result) => send({ id: message.id, result: result === undefined ? null : result }),
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          // What Lambda logs and reports for an unhandled error.
          console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message, stack: e.stack }));
          return send({ id: message.id, error: { errorType: e.name, errorMessage: e.message } });
        },
      );
  });
  await send({ ready: true });
}

main().catch(async (err: unknown) => {
  const e = err instanceof Error ? err : new Error(String(err));
  console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message, stack: e.stack }));
  await send({ initError: { errorType: e.name, errorMessage: e.message } });
  process.exit(1);
});
