/**
 * The Lambda API emulator's asynchronous invocations (lambda-api-emulator.ts), with Lambda's Event
 * semantics: accepted at once, run from an in-memory queue, retried after function errors (at most
 * twice, after the configured waits), and recorded as failures after the last attempt or past their
 * maximum age.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../shared/logger.ts';
import { FunctionNotFoundError, functionError } from './lambda-function-errors.ts';

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

const DEFAULT_ASYNC: AsyncInvokeConfig = { maximumRetryAttempts: 2, maximumEventAgeSeconds: 21_600 };
const DEFAULT_RETRY_DELAYS_MS = [60_000, 120_000];

interface QueuedEvent {
  requestId: string;
  functionName: string;
  payload: unknown;
  receivedAt: number;
  attempts: number;
  running: boolean;
  lastError?: unknown;
}

/** The options of the emulator the queue runs by (LambdaApiEmulatorOptions extends them). */
export interface AsyncInvocationSettings {
  /** Runs the function: resolves with the handler's result; rejects with an Error for a function error. */
  invoke: (functionName: string, payload: unknown) => Promise<unknown>;
  /** The function's asynchronous invocation settings (its EventInvokeConfig); Lambda's defaults when absent. */
  asyncConfig?: (functionName: string) => Partial<AsyncInvokeConfig> | undefined;
  /** Whether a function exists, so an Event invocation of an unknown one is refused at once (404). */
  hasFunction?: (functionName: string) => boolean;
  /** Waits before the first and second retry (Lambda's are about 1 and 2 minutes). */
  retryDelaysMs?: readonly number[];
  logger?: Logger;
}

/** What the queue needs of the emulator: its settings, its clock, and how it names a function. */
export interface AsyncInvocationOptions extends AsyncInvocationSettings {
  now: () => Date;
  functionArn: (name: string) => string;
  /** The error refusing an event for an unknown function. */
  notFound: (name: string) => Error;
}

export class AsyncInvocationQueue {
  private readonly options: AsyncInvocationOptions;
  private readonly now: () => Date;
  private readonly retryDelaysMs: readonly number[];
  private readonly failed: AsyncFailureRecord[] = [];
  /** Events accepted and not yet finished (running, or waiting for a retry). */
  private readonly pending = new Set<QueuedEvent>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(options: AsyncInvocationOptions) {
    this.options = options;
    this.now = options.now;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  /** Stops: events still waiting for a retry are dropped (logged); settle() awaits the running ones. */
  stop(): void {
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
  }

  /** Waits for the running events, after stop(). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.running]);
    this.pending.clear();
    this.wakeIdle();
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

  enqueue(functionName: string, payload: unknown): void {
    if (this.closed) throw new Error('The Lambda emulator is closed');
    if (this.options.hasFunction && !this.options.hasFunction(functionName))
      throw this.options.notFound(functionName);
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
        functionArn: `${this.options.functionArn(event.functionName)}:$LATEST`,
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
