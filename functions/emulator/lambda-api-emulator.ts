import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../shared/logger.ts';
import { AwsWireError, EmulatorServer, readLimitedBody, sendJson } from './emulator-http.ts';

/*
 * A stand-in for the Lambda Invoke API on loopback (restJson1: POST
 * /2015-03-31/functions/{FunctionName}/invocations, X-Amz-Invocation-Type RequestResponse | Event
 * | DryRun), so the unchanged LambdaClient in the bundled Lambdas (AWS_ENDPOINT_URL_LAMBDA) invokes
 * the emulated functions. It runs nothing itself: an injected `invoke` (the process host) does.
 * Event invocations follow Lambda's asynchronous semantics: accepted at once (202), run from an
 * in-memory queue, retried after function errors, and recorded as failures after the last attempt
 * or past their maximum age.
 */

/** What `invoke` rejects with when no function has that name (answered as ResourceNotFoundException). */
export class FunctionNotFoundError extends Error {
  override name = 'FunctionNotFoundError';
}

export interface AsyncInvokeConfig {
  /** 0-2 (Lambda's default 2). */
  maximumRetryAttempts: number;
  /** 60-21600 seconds (Lambda's default 21600, six hours). */
  maximumEventAgeSeconds: number;
}

/** Lambda's on-failure destination record for an asynchronous invocation that never succeeded. */
export interface AsyncFailureRecord {
  version: '1.0';
  timestamp: string;
  requestContext: {
    requestId: string;
    functionArn: string;
    condition: 'RetriesExhausted' | 'EventAgeExceeded';
    approximateInvokeCount: number;
  };
  requestPayload: unknown;
  responseContext: { statusCode: number; executedVersion: string; functionError: string };
  responsePayload: { errorType: string; errorMessage: string };
}

export interface LambdaApiEmulatorOptions {
  /** Runs the function: resolves with the handler's result; rejects with an Error for a function error. */
  invoke: (functionName: string, payload: unknown) => Promise<unknown>;
  /** The function's asynchronous invocation settings (its EventInvokeConfig); Lambda's defaults when absent. */
  asyncConfig?: (functionName: string) => Partial<AsyncInvokeConfig> | undefined;
  /** Whether a function exists, so an Event invocation of an unknown one is refused at once (404). */
  hasFunction?: (functionName: string) => boolean;
  /** Waits before the first and second retry (Lambda's are about 1 and 2 minutes). */
  retryDelaysMs?: readonly number[];
  region?: string;
  accountId?: string;
  now?: () => Date;
  logger?: Logger;
}

/** Lambda's payload quotas: 6 MB synchronous (request and response), 1 MB asynchronous. */
export const SYNC_PAYLOAD_LIMIT = 6 * 1024 * 1024;
export const ASYNC_PAYLOAD_LIMIT = 1024 * 1024;
const DEFAULT_ASYNC: AsyncInvokeConfig = { maximumRetryAttempts: 2, maximumEventAgeSeconds: 21_600 };
const DEFAULT_RETRY_DELAYS_MS = [60_000, 120_000];
const PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** Lambda's FunctionName pattern: a name, a partial ARN or a full ARN, each with an optional qualifier. */
const FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?(?<name>[a-zA-Z0-9-_.]+)(:(?<qualifier>\$LATEST(\.PUBLISHED)?|[a-zA-Z0-9-_]+))?$/;

/** Lambda's error bodies name the fault's side (`Type`) and a message, with the code in a header. */
const userError = (code: string, status: number, message: string) =>
  new AwsWireError(code, status, message, { Type: 'User' });

interface QueuedEvent {
  requestId: string;
  functionName: string;
  payload: unknown;
  receivedAt: number;
  attempts: number;
  running: boolean;
  lastError?: unknown;
}

export class LambdaApiEmulator {
  private readonly options: LambdaApiEmulatorOptions;
  private readonly region: string;
  private readonly accountId: string;
  private readonly now: () => Date;
  private readonly retryDelaysMs: readonly number[];
  private readonly server: EmulatorServer;
  private readonly failed: AsyncFailureRecord[] = [];
  /** Events accepted and not yet finished (running, or waiting for a retry). */
  private readonly pending = new Set<QueuedEvent>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(options: LambdaApiEmulatorOptions) {
    this.options = options;
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.now = options.now ?? (() => new Date());
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.server = new EmulatorServer(
      (req, res) => this.handle(req, res),
      (res, e) =>
        sendJson(
          res,
          e.status,
          // Lambda's model spells it Message for some errors and message for others; the SDK reads both.
          { Type: 'User', ...e.fields, Message: e.message },
          { 'x-amzn-errortype': e.code },
        ),
      options.logger,
    );
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  /** Stops serving; events still waiting for a retry are dropped (logged), running ones are awaited. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const e of this.pending) {
      if (e.attempts > 0 && !e.running) {
        this.options.logger?.warn('lambda emulator dropped a queued event on close', {
          function: e.functionName,
          request_id: e.requestId,
        });
      }
    }
    await this.server.close();
    await Promise.allSettled([...this.running]);
    this.pending.clear();
    this.wakeIdle();
  }

  /**
   * An asynchronous invocation, as Invoke with InvocationType Event: resolves once the event is
   * queued (what EventBridge Scheduler's Lambda target waits for); rejects with
   * FunctionNotFoundError for an unknown function. `functionName` may be a name or an ARN.
   */
  async invokeAsync(functionName: string, payload: unknown): Promise<void> {
    try {
      this.enqueue(this.resolveName(functionName, undefined), payload);
    } catch (err) {
      if (err instanceof AwsWireError && err.code === 'ResourceNotFoundException') {
        throw new FunctionNotFoundError(err.message);
      }
      throw err;
    }
  }

  /** The failure records of asynchronous invocations, oldest first. */
  failures(): AsyncFailureRecord[] {
    return [...this.failed];
  }

  /** Resolves when no accepted asynchronous event is running or waiting for a retry. */
  drain(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://lambda');
    const match = PATH.exec(url.pathname);
    if (req.method !== 'POST' || !match) {
      throw userError('UnknownOperationException', 404, 'The operation is not supported by this emulator.');
    }
    let rawName: string;
    try {
      rawName = decodeURIComponent(match[1]!);
    } catch {
      throw userError('ValidationException', 400, 'The function name is not valid URL encoding.');
    }
    const qualifier = url.searchParams.get('Qualifier') ?? undefined;
    const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (type !== 'RequestResponse' && type !== 'Event' && type !== 'DryRun') {
      throw userError(
        'ValidationException',
        400,
        `1 validation error detected: Value '${type}' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]`,
      );
    }
    const functionName = this.resolveName(rawName, qualifier);
    const limit = type === 'Event' ? ASYNC_PAYLOAD_LIMIT : SYNC_PAYLOAD_LIMIT;
    const raw = await readLimitedBody(req, limit, () =>
      userError(
        'RequestTooLargeException',
        413,
        `Request must be smaller than ${limit} bytes for the ${type === 'Event' ? 'InvokeAsync' : 'Invoke'} operation`,
      ),
    );
    const payload = this.parsePayload(raw);

    if (type === 'DryRun') {
      if (this.options.hasFunction && !this.options.hasFunction(functionName))
        throw this.notFound(functionName);
      sendJson(res, 204, undefined);
      return;
    }
    if (type === 'Event') {
      this.enqueue(functionName, payload);
      sendJson(res, 202, undefined);
      return;
    }
    let result: unknown;
    try {
      result = await this.options.invoke(functionName, payload);
    } catch (err) {
      if (err instanceof FunctionNotFoundError) throw this.notFound(functionName);
      sendJson(res, 200, functionError(err), functionErrorHeaders);
      return;
    }
    // A handler that returns nothing answers `null`, as Lambda's Node.js runtime does.
    const text = JSON.stringify(result ?? null) ?? 'null';
    if (Buffer.byteLength(text) > SYNC_PAYLOAD_LIMIT) {
      sendJson(
        res,
        200,
        {
          errorType: 'Function.ResponseSizeTooLarge',
          errorMessage: `Response payload size exceeded maximum allowed payload size (${SYNC_PAYLOAD_LIMIT} bytes).`,
        },
        functionErrorHeaders,
      );
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      'x-amzn-requestid': randomUUID(),
      'x-amz-executed-version': '$LATEST',
    });
    res.end(text);
  }

  private parsePayload(raw: Buffer): unknown {
    // Lambda hands a function invoked without a payload an empty object.
    if (raw.length === 0) return {};
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw userError(
        'InvalidRequestContentException',
        400,
        `Could not parse request body into json: Could not parse payload into json: ${(err as Error).message}`,
      );
    }
  }

  /** The function's name from any of the accepted forms; only the unpublished version ($LATEST) exists. */
  private resolveName(raw: string, queryQualifier: string | undefined): string {
    const m = FUNCTION_NAME.exec(raw);
    const plain = !raw.includes(':');
    if (!m || raw.length > 256 || (plain && raw.length > 64)) {
      throw userError(
        'ValidationException',
        400,
        `1 validation error detected: Value '${raw.slice(0, 256)}' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: ${FUNCTION_NAME.source}`,
      );
    }
    const name = m.groups!.name!;
    const named = m.groups!.qualifier;
    const qualifier = named ?? queryQualifier;
    if (named !== undefined && queryQualifier !== undefined && named !== queryQualifier) {
      throw userError(
        'InvalidParameterValueException',
        400,
        'The derived qualifier from the function name does not match the specified qualifier.',
      );
    }
    if (qualifier !== undefined && qualifier !== '$LATEST') {
      throw this.notFound(`${name}:${qualifier}`);
    }
    return name;
  }

  private notFound(nameAndQualifier: string): AwsWireError {
    return userError(
      'ResourceNotFoundException',
      404,
      `Function not found: ${this.functionArn(nameAndQualifier)}`,
    );
  }

  private functionArn(name: string): string {
    return `arn:aws:lambda:${this.region}:${this.accountId}:function:${name}`;
  }

  private enqueue(functionName: string, payload: unknown): void {
    if (this.closed) throw new Error('The Lambda emulator is closed');
    if (this.options.hasFunction && !this.options.hasFunction(functionName))
      throw this.notFound(functionName);
    const event: QueuedEvent = {
      requestId: randomUUID(),
      functionName,
      payload,
      receivedAt: this.now().getTime(),
      attempts: 0,
      running: false,
    };
    this.pending.add(event);
    // Asynchronous: the caller has its answer before the function starts.
    setImmediate(() => this.attempt(event));
  }

  private config(functionName: string): AsyncInvokeConfig {
    const c = { ...DEFAULT_ASYNC, ...this.options.asyncConfig?.(functionName) };
    return {
      maximumRetryAttempts: Math.min(2, Math.max(0, Math.floor(c.maximumRetryAttempts))),
      maximumEventAgeSeconds: c.maximumEventAgeSeconds,
    };
  }

  private attempt(event: QueuedEvent): void {
    if (this.closed) return;
    const config = this.config(event.functionName);
    if (
      event.attempts > 0 &&
      this.now().getTime() - event.receivedAt > config.maximumEventAgeSeconds * 1000
    ) {
      this.fail(event, 'EventAgeExceeded', event.lastError);
      return;
    }
    event.attempts += 1;
    event.running = true;
    const run = this.options
      .invoke(event.functionName, event.payload)
      .then(
        () => this.finish(event),
        (err: unknown) => {
          event.lastError = err;
          if (err instanceof FunctionNotFoundError) {
            this.fail(event, 'RetriesExhausted', err);
            return;
          }
          this.options.logger?.warn('asynchronous invocation failed', {
            function: event.functionName,
            request_id: event.requestId,
            attempt: event.attempts,
            error: String((err as Error)?.message ?? err),
          });
          if (event.attempts > config.maximumRetryAttempts) {
            this.fail(event, 'RetriesExhausted', err);
            return;
          }
          if (this.closed) return;
          const wait = this.retryDelaysMs[event.attempts - 1] ?? this.retryDelaysMs.at(-1) ?? 0;
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            this.attempt(event);
          }, wait);
          this.timers.add(timer);
        },
      )
      .finally(() => {
        event.running = false;
        this.running.delete(run);
      });
    this.running.add(run);
  }

  private fail(event: QueuedEvent, condition: 'RetriesExhausted' | 'EventAgeExceeded', err: unknown): void {
    const record: AsyncFailureRecord = {
      version: '1.0',
      timestamp: this.now().toISOString(),
      requestContext: {
        requestId: event.requestId,
        functionArn: `${this.functionArn(event.functionName)}:$LATEST`,
        condition,
        approximateInvokeCount: event.attempts,
      },
      requestPayload: event.payload,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: functionError(err),
    };
    this.failed.push(record);
    this.options.logger?.error('asynchronous invocation failed for good', {
      function: event.functionName,
      request_id: event.requestId,
      condition,
      attempts: event.attempts,
    });
    this.finish(event);
  }

  private finish(event: QueuedEvent): void {
    this.pending.delete(event);
    if (this.pending.size === 0) this.wakeIdle();
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

const functionErrorHeaders = { 'x-amz-function-error': 'Unhandled', 'x-amz-executed-version': '$LATEST' };

/** The error payload of Lambda's Node.js runtime for a handler that threw. */
function functionError(err: unknown): { errorType: string; errorMessage: string; trace?: string[] } {
  if (err instanceof Error) {
    return {
      errorType: err.name,
      errorMessage: err.message,
      ...(err.stack ? { trace: err.stack.split('\n') } : {}),
    };
  }
  return { errorType: 'Error', errorMessage: String(err) };
}
