import type { ServerResponse } from 'node:http';
import type { Route } from './api-gateway-definition.ts';
import type { ResponseStreamSink } from './lambda-host.ts';

/*
 * A method whose integration streams (`ResponseTransferMode: STREAM`; API Gateway invokes the
 * function with InvokeWithResponseStream): the function writes its HTTP prelude (status, headers
 * and cookies as JSON), eight NUL bytes, then the body, and API Gateway sends the status and
 * headers once the prelude is whole and the body as it comes. The integration's timeout covers the
 * whole answer. A failure before the prelude is a gateway 5XX; after it, the connection ends
 * without the rest, as there is no status left to change. A client that goes away ends the
 * function's response stream.
 */

export type StreamingInvoke = (
  functionArn: string,
  event: unknown,
  requestId: string,
  stream: ResponseStreamSink,
) => Promise<unknown>;

const DELIMITER = Buffer.alloc(8);

interface Prelude {
  statusCode?: unknown;
  headers?: Record<string, unknown>;
  cookies?: unknown;
}

/** Answers `res` from the function's response stream; `failed` answers a gateway response instead. */
export async function answerStreamed(
  res: ServerResponse,
  route: Route,
  event: unknown,
  requestId: string,
  invoke: StreamingInvoke,
  failed: (type: 'INTEGRATION_TIMEOUT' | 'DEFAULT_5XX', why: string) => void,
): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  let head: Buffer | undefined = Buffer.alloc(0);
  let malformed = false;
  const onChunk = (chunk: Uint8Array) => {
    if (malformed || res.destroyed) return;
    if (head === undefined) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const at = head.indexOf(DELIMITER);
    if (at < 0) return;
    let prelude: Prelude;
    try {
      prelude = JSON.parse(head.subarray(0, at).toString('utf8')) as Prelude;
    } catch {
      malformed = true;
      return;
    }
    const rest = head.subarray(at + DELIMITER.length);
    head = undefined;
    const status = Number.isInteger(prelude.statusCode) ? (prelude.statusCode as number) : 200;
    for (const [k, v] of Object.entries(prelude.headers ?? {})) res.setHeader(k, String(v));
    if (Array.isArray(prelude.cookies)) res.setHeader('set-cookie', prelude.cookies.map(String));
    res.setHeader('x-amzn-RequestId', requestId);
    res.writeHead(status);
    res.flushHeaders();
    if (rest.length > 0) res.write(rest);
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), route.timeoutMs);
  });
  // The function ended its stream: the answer is whole, and the client has it at once, while the
  // invocation may run on (its work after the answer, until its handler returns, within its own
  // timeout), which the gateway no longer waits for.
  let streamEnded!: () => void;
  const ended = new Promise<'ended'>((resolve) => {
    streamEnded = () => resolve('ended');
  });
  const invocation = invoke(route.functionArn, event, requestId, {
    onChunk,
    onEnd: streamEnded,
    signal: gone.signal,
  });
  let outcome: unknown;
  try {
    outcome = await Promise.race([invocation, timeout, ended]);
  } catch (err) {
    outcome = err;
  } finally {
    clearTimeout(timer);
  }
  // A failure after the answer is whole is the function's own (its log says it), not the client's.
  if (outcome === 'ended') invocation.catch(() => undefined);
  const started = head === undefined;
  if (outcome === 'timeout') {
    gone.abort();
    if (!started) return failed('INTEGRATION_TIMEOUT', 'Endpoint request timed out');
    return void res.destroy();
  }
  if (outcome === 'ended' && started && !malformed) return void res.end();
  if (outcome instanceof Error || malformed || !started) {
    if (!started)
      return failed('DEFAULT_5XX', outcome instanceof Error ? outcome.message : 'no response prelude');
    return void res.destroy();
  }
  res.end();
}
