import type { DurableUsage } from './durable-executions.ts';
import type { FargateProviderUsage } from './fargate-usage.ts';
import type { StandingResources } from './standing-resources.ts';

/**
 * What the emulated deployment used, in the units AWS bills (cost measured, not
 * guessed). One meter per emulated deployment: the emulators record into it as they serve, the
 * cost bench (bench/aws-cost.ts) snapshots and resets it over its loopback endpoint
 * (meter-endpoint.ts) and prices the snapshot (bench/aws-cost-pricing.ts); a test reads it too.
 *
 * - Lambda: requests, and billed GB-seconds at the function's configured memory: each invocation's
 *   duration rounded up to the millisecond, as Lambda bills, plus the INIT phase of a cold start
 *   (billed since August 2025 for managed runtimes); and the most memory an instance held (the
 *   REPORT line's "Max Memory Used", the process's peak resident set), so memory is sized from
 *   measurement.
 * - Lambda durable functions: durable operations, the bytes of checkpoint payloads written, and
 *   the byte-seconds they are retained (to the execution's end and its retention period after
 *   it, counted when it ends), as the emulated Lambda service accepts checkpoints
 *   (durable-executions.ts says which updates are operations).
 * - API Gateway (REST): requests, every one the gateway answered, its own refusals included.
 * - DynamoDB: the read and write request units DynamoDB reported (ReturnConsumedCapacity on every
 *   request of the adapters; read off the wire by metering-proxy.ts). A failed conditional write
 *   carries no figure in its error but is billed (at least 1 WRU): counted apart.
 * - S3: requests by price class (tier 1: PUT, COPY, POST, LIST; tier 2: GET, HEAD and the rest;
 *   DELETE is free) and the bytes stored at the snapshot.
 * - Fargate: the vCPU- and GB-seconds each capacity provider billed in the window, read from ECS
 *   as an operator's script reads it (ListTasks, DescribeTasks: fargate-usage.ts).
 * - Standing resources: read from the synthesized templates, billed by the hour whatever the traffic.
 */

export interface LambdaUsage {
  memoryMb: number;
  architecture: 'arm64' | 'x86_64';
  requests: number;
  /** Billed milliseconds: each invocation's duration rounded up to 1 ms, plus billed INIT phases. */
  billedMs: number;
  /** Billed milliseconds × configured GB. */
  gbSeconds: number;
  coldStarts: number;
  /** The most any instance held, MB (Lambda's "Max Memory Used"). */
  maxMemoryUsedMb: number;
}

export interface MeterSnapshot {
  /** Epoch ms the window began (the last reset) and was read. */
  since: number;
  at: number;
  windowSeconds: number;
  lambda: Record<string, LambdaUsage>;
  /** Lambda durable functions: executions started and ended in the window, and what they used. */
  durable: DurableUsage;
  apiGateway: { requests: number; streamedRequests: number };
  dynamodb: {
    readRequestUnits: number;
    writeRequestUnits: number;
    requests: number;
    /** Requests whose answer carried no ConsumedCapacity (an adapter that did not ask for it). */
    unmeteredRequests: Record<string, number>;
    /** Conditional writes refused (billed at least 1 WRU each; DynamoDB returns no figure). */
    conditionFailures: number;
    /** The same by operation (GetItem, Query, PutItem…): where a shape's units go. */
    byOperation: Record<string, { requests: number; read: number; write: number }>;
  };
  s3: { tier1Requests: number; tier2Requests: number; freeRequests: number; storedBytes: number };
  /** vCPU- and GB-seconds per capacity provider (FARGATE, FARGATE_SPOT) within the window. */
  fargate: Record<string, FargateProviderUsage>;
  /** Tasks not stopped at the snapshot. */
  fargateOpenTasks: number;
  standing: StandingResources;
}

/** What ECS says about the account's tasks: their billed usage in [from, to) and how many run. */
export type FargateReader = (
  from: number,
  to: number,
) => Promise<{ usage: Record<string, FargateProviderUsage>; open: number }>;

const noDurableUsage = (): DurableUsage => ({
  executionsStarted: 0,
  executionsEnded: 0,
  operations: 0,
  bytesWritten: 0,
  retainedByteSeconds: 0,
});

export class DeploymentMeter {
  private since = Date.now();
  private lambdaUsage = new Map<string, LambdaUsage>();
  private durable = noDurableUsage();
  private api = { requests: 0, streamedRequests: 0 };
  private dynamo = {
    readRequestUnits: 0,
    writeRequestUnits: 0,
    requests: 0,
    unmeteredRequests: {} as Record<string, number>,
    conditionFailures: 0,
    byOperation: {} as Record<string, { requests: number; read: number; write: number }>,
  };
  private s3 = { tier1Requests: 0, tier2Requests: 0, freeRequests: 0 };
  private readonly fargate: FargateReader | undefined;
  private readonly standing: StandingResources;
  private readonly storedBytes: () => number;
  private readonly now: () => number;

  constructor(options: {
    standing: StandingResources;
    storedBytes?: () => number;
    fargate?: FargateReader;
    now?: () => number;
  }) {
    this.standing = options.standing;
    this.fargate = options.fargate;
    this.storedBytes = options.storedBytes ?? (() => 0);
    this.now = options.now ?? Date.now;
    this.since = this.now();
  }

  /** One invocation: `durationMs` as the host timed it, `initMs` when it started an instance. */
  lambdaInvocation(fn: {
    name: string;
    memoryMb: number;
    architecture: 'arm64' | 'x86_64';
    durationMs: number;
    initMs?: number | undefined;
    maxMemoryUsedMb?: number | undefined;
  }): void {
    let u = this.lambdaUsage.get(fn.name);
    if (!u) {
      u = {
        memoryMb: fn.memoryMb,
        architecture: fn.architecture,
        requests: 0,
        billedMs: 0,
        gbSeconds: 0,
        coldStarts: 0,
        maxMemoryUsedMb: 0,
      };
      this.lambdaUsage.set(fn.name, u);
    }
    const billed = Math.ceil(fn.durationMs) + (fn.initMs === undefined ? 0 : Math.ceil(fn.initMs));
    u.requests++;
    u.billedMs += billed;
    u.gbSeconds += (billed / 1000) * (fn.memoryMb / 1024);
    if (fn.initMs !== undefined) u.coldStarts++;
    u.maxMemoryUsedMb = Math.max(u.maxMemoryUsedMb, fn.maxMemoryUsedMb ?? 0);
  }

  /** What a durable execution used since it was last told (durable-executions.ts). */
  durableUsage(usage: Partial<DurableUsage>): void {
    for (const k of Object.keys(this.durable) as (keyof DurableUsage)[]) this.durable[k] += usage[k] ?? 0;
  }

  apiRequest(streamed: boolean): void {
    this.api.requests++;
    if (streamed) this.api.streamedRequests++;
  }

  /** One DynamoDB request and its answer's ConsumedCapacity (undefined: the answer had none). */
  dynamodbRequest(operation: string, consumed: { read: number; write: number } | undefined): void {
    this.dynamo.requests++;
    const op = this.dynamo.byOperation[operation] ?? { requests: 0, read: 0, write: 0 };
    this.dynamo.byOperation[operation] = op;
    op.requests++;
    op.read += consumed?.read ?? 0;
    op.write += consumed?.write ?? 0;
    if (!consumed) {
      this.dynamo.unmeteredRequests[operation] = (this.dynamo.unmeteredRequests[operation] ?? 0) + 1;
      return;
    }
    this.dynamo.readRequestUnits += consumed.read;
    this.dynamo.writeRequestUnits += consumed.write;
  }

  dynamodbConditionFailure(): void {
    this.dynamo.conditionFailures++;
  }

  /** S3 bills by request class: the method and whether the request names a bucket or an object. */
  s3Request(method: string, path: string, query: string): void {
    const m = method.toUpperCase();
    const onBucket = path.replace(/^\/+/, '').split('/').filter(Boolean).length <= 1;
    if (m === 'DELETE') this.s3.freeRequests++;
    else if (m === 'PUT' || m === 'POST' || (m === 'GET' && onBucket && !/(^|&)location(=|&|$)/.test(query)))
      this.s3.tier1Requests++;
    else this.s3.tier2Requests++;
  }

  reset(): void {
    this.since = this.now();
    this.lambdaUsage = new Map();
    this.durable = noDurableUsage();
    this.api = { requests: 0, streamedRequests: 0 };
    this.dynamo = {
      readRequestUnits: 0,
      writeRequestUnits: 0,
      requests: 0,
      unmeteredRequests: {},
      conditionFailures: 0,
      byOperation: {},
    };
    this.s3 = { tier1Requests: 0, tier2Requests: 0, freeRequests: 0 };
  }

  async snapshot(): Promise<MeterSnapshot> {
    const at = this.now();
    const fargate = this.fargate ? await this.fargate(this.since, at) : { usage: {}, open: 0 };
    return {
      since: this.since,
      at,
      windowSeconds: (at - this.since) / 1000,
      lambda: Object.fromEntries([...this.lambdaUsage].map(([k, v]) => [k, { ...v }])),
      durable: { ...this.durable },
      apiGateway: { ...this.api },
      dynamodb: {
        ...this.dynamo,
        unmeteredRequests: { ...this.dynamo.unmeteredRequests },
        byOperation: Object.fromEntries(
          Object.entries(this.dynamo.byOperation).map(([k, v]) => [k, { ...v }]),
        ),
      },
      s3: { ...this.s3, storedBytes: this.storedBytes() },
      fargate: { ...fargate.usage },
      fargateOpenTasks: fargate.open,
      standing: this.standing,
    };
  }
}
