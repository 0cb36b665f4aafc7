import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleDurableExecutionApi } from './durable-execution-api.ts';
import { DurableExecutions, type DurableUsageSink } from './durable-executions.ts';
import { DurableInvocations } from './durable-invocations.ts';
import { AwsWireError, EmulatorServer, readLimitedBody, sendJson } from './emulator-http.ts';
import {
  type AsyncFailureRecord,
  AsyncInvocationQueue,
  type AsyncInvocationSettings,
} from './lambda-async-invocations.ts';
import { FunctionNotFoundError, functionError, functionErrorHeaders } from './lambda-function-errors.ts';

/** A request header's single value. */
const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/*
 * A stand-in for the Lambda Invoke API on loopback (restJson1: POST
 * /2015-03-31/functions/{FunctionName}/invocations, X-Amz-Invocation-Type RequestResponse | Event
 * | DryRun), so the unchanged LambdaClient in the bundled Lambdas (AWS_ENDPOINT_URL_LAMBDA) invokes
 * the emulated functions. It runs nothing itself: an injected `invoke` (the process host) does.
 * Event invocations follow Lambda's asynchronous semantics: accepted at once (202), run from an
 * in-memory queue, retried after function errors, and recorded as failures after the last attempt
 * or past their maximum age (lambda-async-invocations.ts).
 */

export interface LambdaApiEmulatorOptions extends AsyncInvocationSettings {
  region?: string;
  accountId?: string;
  now?: () => Date;
  /**
   * A durable function's DurableConfig (its execution timeout, and how many days an ended
   * execution is kept: Lambda's default 14 without it), undefined for any other: its invocations
   * start durable executions (durable-executions.ts), invoked until they end.
   */
  durableConfig?: (
    functionName: string,
  ) => { timeoutSeconds: number; retentionDays?: number | undefined } | undefined;
  /** Where what the durable executions used goes, in Lambda's billing units (the deployment's meter). */
  durableUsage?: DurableUsageSink;
  /** The pause before invoking a durable execution again after a failed invocation. */
  durableRetryDelayMs?: number;
}

/** Lambda's payload quotas: 6 MB synchronous (request and response), 1 MB asynchronous. */
export const SYNC_PAYLOAD_LIMIT = 6 * 1024 * 1024;
export const ASYNC_PAYLOAD_LIMIT = 1024 * 1024;
const PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** Lambda's FunctionName pattern: a name, a partial ARN or a full ARN, each with an optional qualifier. */
const FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?(?<name>[a-zA-Z0-9-_.]+)(:(?<qualifier>\$LATEST(\.PUBLISHED)?|[a-zA-Z0-9-_]+))?$/;

/** Lambda's error bodies name the fault's side (`Type`) and a message, with the code in a header. */
const userError = (code: string, status: number, message: string) =>
  new AwsWireError(code, status, message, { Type: 'User' });

export class LambdaApiEmulator {
  private readonly options: LambdaApiEmulatorOptions;
  private readonly region: string;
  private readonly accountId: string;
  private readonly now: () => Date;
  private readonly server: EmulatorServer;
  private readonly queue: AsyncInvocationQueue;
  readonly executions: DurableExecutions;
  private readonly durable: DurableInvocations;

  constructor(options: LambdaApiEmulatorOptions) {
    this.options = options;
    this.executions = new DurableExecutions(Date.now, options.durableUsage);
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.now = options.now ?? (() => new Date());
    this.queue = new AsyncInvocationQueue({
      ...options,
      now: this.now,
      functionArn: (name) => this.functionArn(name),
      notFound: (name) => this.notFound(name),
    });
    this.durable = new DurableInvocations({
      executions: this.executions,
      invoke: (name, payload) => options.invoke(name, payload),
      retryDelayMs: options.durableRetryDelayMs,
      logger: options.logger,
    });
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
    this.queue.stop();
    await this.durable.close();
    await this.server.close();
    await this.queue.settle();
  }

  /**
   * An asynchronous invocation, as Invoke with InvocationType Event: resolves once the event is
   * queued (what EventBridge Scheduler's Lambda target waits for); rejects with
   * FunctionNotFoundError for an unknown function. `functionName` may be a name or an ARN.
   */
  async invokeAsync(functionName: string, payload: unknown): Promise<void> {
    try {
      this.queue.enqueue(this.resolveName(functionName, undefined), payload);
    } catch (err) {
      if (err instanceof AwsWireError && err.code === 'ResourceNotFoundException') {
        throw new FunctionNotFoundError(err.message);
      }
      throw err;
    }
  }

  /** The failure records of asynchronous invocations, oldest first. */
  failures(): AsyncFailureRecord[] {
    return this.queue.failures();
  }

  /** Resolves when no accepted asynchronous event is running or waiting for a retry. */
  drain(): Promise<void> {
    return this.queue.drain();
  }

  // ---------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://lambda');
    if (await handleDurableExecutionApi(this.executions, req, res, url)) return;
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
    const durable = this.options.durableConfig?.(functionName);
    if (durable) {
      const version = qualifier ?? FUNCTION_NAME.exec(rawName)?.groups?.qualifier;
      if (version === undefined) {
        throw userError(
          'InvalidParameterValueException',
          400,
          'A durable function is invoked by a version or an alias: qualify its name or ARN.',
        );
      }
      await this.invokeDurable(res, functionName, version, type, payload, {
        name: header(req, 'x-amz-durable-execution-name'),
        timeoutSeconds: durable.timeoutSeconds,
        retentionDays: durable.retentionDays,
      });
      return;
    }
    if (type === 'Event') {
      this.queue.enqueue(functionName, payload);
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

  /**
   * An invocation of a durable function: starts its execution (or finds the one of that name), and
   * answers at once for an Event, or once it ended for a RequestResponse (its result, or its error
   * as a function error), as Lambda does for executions that fit a synchronous invocation.
   */
  private async invokeDurable(
    res: ServerResponse,
    functionName: string,
    qualifier: string,
    type: string,
    payload: unknown,
    options: { name: string | undefined; timeoutSeconds: number; retentionDays: number | undefined },
  ): Promise<void> {
    const { execution, started } = this.executions.start(
      `${this.functionArn(functionName)}:${qualifier}`,
      functionName,
      payload,
      options,
    );
    const ended = started ? this.durable.begin(execution) : this.durable.ended(execution);
    const headers = { 'x-amz-durable-execution-arn': execution.arn };
    if (type === 'Event') return sendJson(res, 202, undefined, headers);
    await ended;
    const ending = execution.ending;
    if (ending?.status === 'SUCCEEDED') {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(ending.result ?? 'null');
      return;
    }
    sendJson(
      res,
      200,
      {
        errorType:
          ending?.status === 'FAILED' ? (ending.error?.ErrorType ?? 'Error') : (ending?.status ?? 'Error'),
        errorMessage:
          ending?.status === 'FAILED' ? (ending.error?.ErrorMessage ?? '') : 'The execution did not succeed',
      },
      { ...functionErrorHeaders, ...headers },
    );
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
    // Durable functions are invoked by a version or an alias (all the same code here).
    if (qualifier !== undefined && qualifier !== '$LATEST' && !this.options.durableConfig?.(name)) {
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
}
