import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { CpuShareGroup, CpuShares } from './lambda-cpu-share.ts';

/**
 * The emulated Lambda service: each function of the template runs in processes of its own, one
 * event at a time per process (a Lambda instance), started on the first event that finds no idle
 * instance (a cold start) and kept warm after. An instance gets the asset as its working directory,
 * the environment the template gives the function (plus what Lambda's runtime adds) and a heap
 * sized from the function's memory (and, with `cpuShares`, the CPU share Lambda gives that memory:
 * lambda-cpu-share.ts). An event that outlives the function's timeout kills its
 * instance, as Lambda does, and fails with "Task timed out".
 */

const RUNTIME = join(dirname(fileURLToPath(import.meta.url)), 'lambda-runtime.mjs');

/** Lambda's limit on a synchronous request and its response (6 MB). */
export const SYNC_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;

export interface EmulatedFunction {
  /** The function's name (what Invoke and ARNs name it by). */
  name: string;
  /** A short name for its log lines. */
  logName: string;
  arn: string;
  /** The asset folder (Lambda's /var/task). */
  assetDir: string;
  /** `index.handler`. */
  handler: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** What the template's Architectures names (Lambda's default is x86_64). */
  architecture?: 'arm64' | 'x86_64';
  /** The function's whole environment. */
  environment: Record<string, string>;
  /** Most instances at once (reserved concurrency, or the emulator's cap). */
  maxInstances: number;
  /** A durable function's DurableConfig.ExecutionTimeout (seconds); absent for any other. */
  durableTimeoutSeconds?: number | undefined;
  /** Its DurableConfig.RetentionPeriodInDays (Lambda's default, 14, when the template says none). */
  durableRetentionDays?: number | undefined;
}

/** A failed invocation, as Lambda reports it (`errorType`, `errorMessage`). */
/** Lambda's limit on an instance's INIT phase, apart from the function's timeout. */
const INIT_PHASE_LIMIT_MS = 10_000;

export class FunctionError extends Error {
  readonly errorType: string;
  constructor(errorType: string, message: string) {
    super(message);
    this.name = 'FunctionError';
    this.errorType = errorType;
  }
}

export class UnknownFunctionError extends Error {
  override name = 'UnknownFunctionError';
}

interface Instance {
  child: ChildProcess;
  busy: boolean;
  ready: Promise<void>;
  /** The INIT phase's milliseconds, until the first event has been billed for it. */
  initMs?: number | undefined;
  /** The process's peak resident set, KB, as of its last answer. */
  maxRssKb: number;
  /** When the current event was handed to the handler (performance.now()). */
  sentAt?: number | undefined;
  /** Its CPU cgroup, when the host models Lambda's CPU share. */
  cpu?: CpuShareGroup | undefined;
  pending?: {
    id: number;
    resolve: (v: unknown) => void;
    reject: (e: Error) => void;
    onChunk?: ((chunk: Uint8Array) => void) | undefined;
    onEnd?: (() => void) | undefined;
  };
}

/**
 * A streamed invocation (InvokeWithResponseStream): each chunk the handler writes, as it writes
 * it; `signal` ends the response stream (the client went away).
 */
export interface ResponseStreamSink {
  onChunk(chunk: Uint8Array): void;
  /**
   * The handler ended its response stream: the answer is whole, while the invocation may run on
   * until its handler returns (work after the answer, within the function's timeout).
   */
  onEnd?: (() => void) | undefined;
  signal?: AbortSignal | undefined;
}

type LogSink = (fn: string, line: string) => void;

/** One finished invocation, as Lambda's REPORT line gives it (for the deployment's meter). */
export interface InvocationReport {
  fn: EmulatedFunction;
  durationMs: number;
  /** Set on the invocation that started its instance (a cold start). */
  initMs?: number | undefined;
  maxMemoryUsedMb: number;
}

class FunctionPool {
  readonly fn: EmulatedFunction;
  private readonly instances = new Set<Instance>();
  private readonly waiting: (() => void)[] = [];
  private readonly log: LogSink;
  private readonly report: ((r: InvocationReport) => void) | undefined;
  private readonly cpuShares: CpuShares | undefined;
  private nextId = 0;
  private started = 0;
  private closed = false;

  constructor(
    fn: EmulatedFunction,
    log: LogSink,
    report: ((r: InvocationReport) => void) | undefined,
    cpuShares: CpuShares | undefined,
  ) {
    this.fn = fn;
    this.log = log;
    this.report = report;
    this.cpuShares = cpuShares;
  }

  async invoke(event: unknown, requestId: string, stream?: ResponseStreamSink): Promise<unknown> {
    const instance = await this.acquire();
    try {
      return await this.run(instance, event, requestId, stream);
    } finally {
      instance.busy = false;
      // Billed from when the event reached the handler (INIT apart), to its answer or its end.
      const sent = instance.sentAt;
      const initMs = instance.initMs;
      instance.sentAt = undefined;
      instance.initMs = undefined;
      this.report?.({
        fn: this.fn,
        durationMs: sent === undefined ? 0 : performance.now() - sent,
        initMs,
        maxMemoryUsedMb: instance.maxRssKb / 1024,
      });
      this.waiting.shift()?.();
    }
  }

  private async acquire(): Promise<Instance> {
    for (;;) {
      if (this.closed) throw new FunctionError('Runtime.Closed', 'The emulated Lambda service is stopping');
      for (const i of this.instances) {
        if (!i.busy) {
          i.busy = true;
          return i;
        }
      }
      if (this.instances.size < this.fn.maxInstances) {
        const i = this.start();
        i.busy = true;
        return i;
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  private start(): Instance {
    const fn = this.fn;
    const child = fork(RUNTIME, [fn.assetDir, fn.handler], {
      cwd: fn.assetDir,
      env: fn.environment,
      execPath: process.execPath,
      execArgv: lambdaNodeFlags(fn.memoryMb),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => this.log(fn.logName, line));
    }
    const instance: Instance = { child, busy: false, ready: Promise.resolve(), maxRssKb: 0 };
    if (this.cpuShares && child.pid !== undefined) {
      // Placed as soon as forked: the few milliseconds before count as this machine's, not Lambda's.
      instance.cpu = this.cpuShares.group(`${fn.logName}-${++this.started}`, fn.memoryMb);
      instance.cpu.place(child.pid);
    }
    const forked = performance.now();
    instance.ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Record<string, unknown>) => {
        if (typeof message.maxRssKb === 'number') instance.maxRssKb = message.maxRssKb;
        if (message.ready) {
          instance.initMs = performance.now() - forked;
          return resolve();
        }
        if (message.initError) {
          const e = message.initError as { errorType: string; errorMessage: string };
          return reject(new FunctionError(e.errorType, e.errorMessage));
        }
        const pending = instance.pending;
        if (!pending || pending.id !== message.id) return;
        if (message.chunk) return pending.onChunk?.(message.chunk as Uint8Array);
        if (message.streamEnd) return pending.onEnd?.();
        instance.pending = undefined;
        if (message.error) {
          const e = message.error as { errorType: string; errorMessage: string };
          pending.reject(new FunctionError(e.errorType, e.errorMessage));
        } else pending.resolve(message.result);
      });
      child.on('exit', (code, signal) => {
        this.instances.delete(instance);
        instance.cpu?.remove();
        const why = new FunctionError(
          'Runtime.ExitError',
          `RequestId: ${instance.pending?.id ?? '-'} Error: Runtime exited ${signal ? `with signal ${signal}` : `with error: exit status ${code}`}`,
        );
        reject(why);
        instance.pending?.reject(why);
        instance.pending = undefined;
        this.waiting.shift()?.();
      });
    });
    // A failed start is reported to the event that caused it.
    instance.ready.catch(() => undefined);
    this.instances.add(instance);
    return instance;
  }

  private async run(
    instance: Instance,
    event: unknown,
    requestId: string,
    stream?: ResponseStreamSink,
  ): Promise<unknown> {
    const fn = this.fn;
    const timeoutMs = fn.timeoutSeconds * 1000;
    // The function's timeout counts from the handler's start: a new instance's INIT phase has a
    // limit of its own (10 s), and only an INIT longer than that runs on into the invocation's time,
    // as Lambda's suppressed init does. Counting INIT in the timeout failed a cold start of a large
    // bundle on a loaded machine with a 502 that Lambda would not give.
    let timer: NodeJS.Timeout | undefined;
    let initTimer: NodeJS.Timeout | undefined;
    let deadlineMs = Date.now() + INIT_PHASE_LIMIT_MS + timeoutMs;
    const timedOut = new Promise<never>((_, reject) => {
      const arm = () => {
        if (timer) return;
        clearTimeout(initTimer);
        deadlineMs = Date.now() + timeoutMs;
        timer = setTimeout(() => {
          // Lambda ends the instance: nothing the handler left running survives into the next event.
          instance.child.kill('SIGKILL');
          reject(
            new FunctionError(
              'Sandbox.Timedout',
              `${requestId} Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
            ),
          );
        }, timeoutMs);
      };
      initTimer = setTimeout(arm, INIT_PHASE_LIMIT_MS);
      instance.ready.then(arm, () => undefined);
    });
    try {
      return await Promise.race([
        timedOut,
        instance.ready.then(
          () =>
            new Promise<unknown>((resolve, reject) => {
              const id = ++this.nextId;
              instance.pending = { id, resolve, reject, onChunk: stream?.onChunk, onEnd: stream?.onEnd };
              instance.sentAt = performance.now();
              stream?.signal?.addEventListener(
                'abort',
                () => {
                  if (instance.child.connected && instance.pending?.id === id)
                    instance.child.send({ abort: id });
                },
                { once: true },
              );
              instance.child.send({
                id,
                event,
                ...(stream ? { stream: true } : {}),
                context: {
                  awsRequestId: requestId,
                  deadlineMs,
                  functionName: fn.name,
                  invokedFunctionArn: fn.arn,
                  memoryLimitInMB: String(fn.memoryMb),
                },
              });
            }),
        ),
      ]);
    } finally {
      clearTimeout(initTimer);
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const resolve of this.waiting.splice(0)) resolve();
    await Promise.all(
      [...this.instances].map(
        (i) =>
          new Promise<void>((resolve) => {
            if (i.child.exitCode !== null || i.child.signalCode !== null) return resolve();
            i.child.once('exit', () => resolve());
            i.child.kill('SIGTERM');
            setTimeout(() => i.child.kill('SIGKILL'), 2000).unref();
          }),
      ),
    );
  }

  get instanceCount(): number {
    return this.instances.size;
  }
}

export class LambdaHost {
  private readonly pools = new Map<string, FunctionPool>();
  private readonly cpuShares: CpuShares | undefined;

  /** With `cpuShares`, each instance gets the CPU share of its function's memory, as on Lambda. */
  constructor(
    functions: EmulatedFunction[],
    log: LogSink,
    report?: (r: InvocationReport) => void,
    cpuShares?: CpuShares,
  ) {
    this.cpuShares = cpuShares;
    for (const fn of functions) this.pools.set(fn.name, new FunctionPool(fn, log, report, cpuShares));
  }

  /** The function a name, partial ARN or full ARN (with or without a qualifier) refers to. */
  find(nameOrArn: string): EmulatedFunction | undefined {
    const name = nameOrArn.includes(':function:')
      ? (nameOrArn.split(':function:')[1]?.split(':')[0] ?? '')
      : (nameOrArn.split(':')[0] ?? '');
    return this.pools.get(name)?.fn;
  }

  /**
   * Runs one event; resolves with the handler's result, rejects with a FunctionError. With
   * `stream`, a streaming handler's response goes there as it is written (and the result is null).
   */
  async invoke(
    nameOrArn: string,
    event: unknown,
    requestId: string = randomUUID(),
    stream?: ResponseStreamSink,
  ): Promise<unknown> {
    const fn = this.find(nameOrArn);
    if (!fn) throw new UnknownFunctionError(`Function not found: ${nameOrArn}`);
    return (this.pools.get(fn.name) as FunctionPool).invoke(event, requestId, stream);
  }

  /** Instances running now, per function (for tests and the start-up summary). */
  instances(): Record<string, number> {
    return Object.fromEntries([...this.pools].map(([name, p]) => [name, p.instanceCount]));
  }

  functions(): EmulatedFunction[] {
    return [...this.pools.values()].map((p) => p.fn);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.cpuShares?.close();
  }
}

/**
 * The flags Lambda's Node.js runtime starts node with (its bootstrap script): V8's young generation
 * a tenth of the function's memory, in two semi-spaces, and the old generation the rest; `gc()`
 * exposed; HTTP headers up to 80 KiB. The same here, so that an instance's heap, and how often it
 * collects garbage (CPU its duration is billed for), are Lambda's.
 */
export function lambdaNodeFlags(memoryMb: number): string[] {
  const newSpaceMb = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(newSpaceMb / 2)}`,
    `--max-old-space-size=${memoryMb - newSpaceMb}`,
  ];
}
