import { randomUUID } from 'node:crypto';
import { AwsWireError } from './emulator-http.ts';

/*
 * Lambda's durable executions as the emulated Lambda service keeps them (docs/deploy.md, "Durable
 * functions"): the operations log of each execution, changed by the function's checkpoints
 * (CheckpointDurableExecution) and read back by its invocations (their InitialExecutionState, and
 * GetDurableExecutionState for the pages past the first). The unchanged durable execution SDK in a
 * function's bundle speaks to it over the Lambda API's wire (lambda-api-emulator.ts): a step it
 * finished answers its recorded result on every later invocation, which is what lets an execution
 * outlive the invocation that ran it. The invocations themselves are the emulator's
 * (durable-invocations.ts). Executions live in memory: a restarted emulated deployment has none.
 *
 * What Lambda bills a durable execution for (https://aws.amazon.com/lambda/pricing/, "Durable
 * functions") is told to a usage sink (the deployment's meter) as the checkpoints come:
 * - durable operations: the execution's start; each attempt of a step that ended (SUCCEED, FAIL,
 *   or RETRY, which AWS's retries page meters as "1 operation"); and each other operation (a wait,
 *   a child context, a callback, a chained invoke) once, when it is created. A step's START is not
 *   one of its own: a step is one operation an attempt, however it was checkpointed.
 * - data written: the bytes of the payloads persisted (the execution's input, each update's
 *   Payload and Error).
 * - data retained: those bytes for as long as they are kept, from their write to the execution's
 *   end and its function's retention period after it (DurableConfig.RetentionPeriodInDays): told
 *   when the execution ends, as byte-seconds, since that is when its retention is known.
 */

/** An operation as the wire carries it (Lambda's Operation shape; timestamps as epoch seconds). */
export interface WireOperation {
  Id: string;
  ParentId?: string;
  Name?: string;
  Type: string;
  SubType?: string;
  StartTimestamp: number;
  EndTimestamp?: number;
  Status: string;
  ExecutionDetails?: { InputPayload?: string };
  StepDetails?: { Attempt?: number; NextAttemptTimestamp?: number; Result?: string; Error?: WireError };
  WaitDetails?: { ScheduledEndTimestamp?: number };
  ContextDetails?: { ReplayChildren?: boolean; Result?: string; Error?: WireError };
}

export interface WireError {
  ErrorMessage?: string;
  ErrorType?: string;
  ErrorData?: string;
  StackTrace?: string[];
}

/** A change a checkpoint asks for (Lambda's OperationUpdate). */
export interface OperationUpdate {
  Id: string;
  ParentId?: string;
  Name?: string;
  Type: string;
  SubType?: string;
  Action: 'START' | 'SUCCEED' | 'FAIL' | 'RETRY' | 'CANCEL';
  Payload?: string;
  Error?: WireError;
  StepOptions?: { NextAttemptDelaySeconds?: number };
  WaitOptions?: { WaitSeconds?: number };
  ContextOptions?: { ReplayChildren?: boolean };
}

/** What a durable execution used, in Lambda's billing units (a usage sink adds them up). */
export interface DurableUsage {
  executionsStarted: number;
  executionsEnded: number;
  operations: number;
  bytesWritten: number;
  /** Bytes × seconds kept: until the execution's end, and its retention period after it. */
  retainedByteSeconds: number;
}

export type DurableUsageSink = (usage: Partial<DurableUsage>) => void;

/** Lambda's default retention of an ended execution's history (DurableConfig.RetentionPeriodInDays). */
export const DEFAULT_RETENTION_DAYS = 14;

/** How an execution ended, as its last invocation answered (the SDK's invocation output). */
export type ExecutionEnding =
  | { status: 'SUCCEEDED'; result?: string }
  | { status: 'FAILED'; error?: WireError }
  | { status: 'TIMED_OUT' | 'STOPPED' };

export interface DurableExecution {
  arn: string;
  functionName: string;
  name: string;
  startedMs: number;
  /** When it is stopped as TIMED_OUT (its function's DurableConfig.ExecutionTimeout). */
  deadlineMs: number;
  /** In the order they were first written: the EXECUTION operation first. */
  operations: Map<string, WireOperation>;
  /** The token the next checkpoint must carry; each checkpoint is given a new one. */
  token: string;
  /** A result the SDK checkpointed rather than answered (over Lambda's 6 MB answer). */
  checkpointedResult?: string | undefined;
  ending?: ExecutionEnding;
  /** Its function's retention of its history once it ended, in days. */
  retentionDays: number;
  /** The payload bytes it holds, and the byte-seconds they were held up to `heldSinceMs`. */
  storedBytes: number;
  retainedByteSeconds: number;
  heldSinceMs: number;
}

/** Operations a GetDurableExecutionState page holds at most (the SDK asks for 1,000). */
const PAGE = 1000;

const seconds = (ms: number) => ms / 1000;
const bytes = (text: string | undefined) => (text === undefined ? 0 : Buffer.byteLength(text));
const errorBytes = (error: WireError | undefined) => (error === undefined ? 0 : bytes(JSON.stringify(error)));
const iso = (s: number | undefined) => (s === undefined ? undefined : new Date(s * 1000).toISOString());

/** An operation with its timestamps as ISO strings, as an invocation's event carries them. */
function withIsoTimes(op: WireOperation): Record<string, unknown> {
  return {
    ...op,
    StartTimestamp: iso(op.StartTimestamp),
    ...(op.EndTimestamp !== undefined ? { EndTimestamp: iso(op.EndTimestamp) } : {}),
    ...(op.StepDetails
      ? { StepDetails: { ...op.StepDetails, NextAttemptTimestamp: iso(op.StepDetails.NextAttemptTimestamp) } }
      : {}),
    ...(op.WaitDetails
      ? { WaitDetails: { ScheduledEndTimestamp: iso(op.WaitDetails.ScheduledEndTimestamp) } }
      : {}),
  };
}

export class DurableExecutions {
  private readonly byArn = new Map<string, DurableExecution>();
  private readonly now: () => number;
  private readonly usage: DurableUsageSink | undefined;

  constructor(now: () => number = Date.now, usage?: DurableUsageSink) {
    this.now = now;
    this.usage = usage;
  }

  /**
   * Starts an execution of `functionArn` (qualified) with `payload`, or answers the one already
   * started under `name`: a durable execution's name makes its start idempotent.
   */
  start(
    functionArn: string,
    functionName: string,
    payload: unknown,
    options: { name?: string | undefined; timeoutSeconds: number; retentionDays?: number | undefined },
  ): { execution: DurableExecution; started: boolean } {
    const name = options.name ?? randomUUID();
    const arn = `${functionArn}/durable-execution/${name}/${randomUUID()}`;
    const existing = [...this.byArn.values()].find((e) => e.functionName === functionName && e.name === name);
    if (existing) return { execution: existing, started: false };
    const startedMs = this.now();
    const id = randomUUID();
    const input = JSON.stringify(payload ?? {});
    const execution: DurableExecution = {
      arn,
      functionName,
      name,
      startedMs,
      deadlineMs: startedMs + options.timeoutSeconds * 1000,
      operations: new Map([
        [
          id,
          {
            Id: id,
            Type: 'EXECUTION',
            Name: name,
            StartTimestamp: seconds(startedMs),
            Status: 'STARTED',
            ExecutionDetails: { InputPayload: input },
          },
        ],
      ]),
      token: randomUUID(),
      retentionDays: options.retentionDays ?? DEFAULT_RETENTION_DAYS,
      storedBytes: 0,
      retainedByteSeconds: 0,
      heldSinceMs: startedMs,
    };
    this.byArn.set(arn, execution);
    this.write(execution, bytes(input));
    this.usage?.({ executionsStarted: 1, operations: 1, bytesWritten: bytes(input) });
    return { execution, started: true };
  }

  get(arn: string): DurableExecution | undefined {
    return this.byArn.get(arn);
  }

  /** What an invocation of the execution is given: its ARN, its token and its first page of operations. */
  invocationInput(execution: DurableExecution, updatedIds: string[] = []): Record<string, unknown> {
    // The invocation's event is JSON the SDK reads itself: its timestamps as ISO strings (the API's
    // answers carry epoch seconds, which the AWS SDK's client turns into dates).
    const all = [...execution.operations.values()].map(withIsoTimes);
    return {
      DurableExecutionArn: execution.arn,
      CheckpointToken: execution.token,
      ...(updatedIds.length > 0 ? { UpdatedOperationIds: updatedIds } : {}),
      InitialExecutionState: {
        Operations: all.slice(0, PAGE),
        ...(all.length > PAGE ? { NextMarker: String(PAGE) } : {}),
      },
    };
  }

  /**
   * CheckpointDurableExecution: applies `updates` in order; answers the new token and what changed,
   * the service's own changes since (a wait over, a retry due) included.
   */
  checkpoint(
    arn: string,
    token: string,
    updates: OperationUpdate[],
  ): { CheckpointToken: string; NewExecutionState: { Operations: WireOperation[] } } {
    const execution = this.live(arn, token);
    const changed = new Map<string, WireOperation>();
    let operations = 0;
    let written = 0;
    for (const update of updates) {
      operations += this.billedOperations(execution, update);
      const op = this.apply(execution, update);
      changed.set(op.Id, op);
      written += bytes(update.Payload) + errorBytes(update.Error);
    }
    this.write(execution, written);
    if (operations > 0 || written > 0) this.usage?.({ operations, bytesWritten: written });
    for (const id of this.due(execution, this.now()).updatedIds) {
      const op = execution.operations.get(id);
      if (op) changed.set(id, op);
    }
    execution.token = randomUUID();
    return { CheckpointToken: execution.token, NewExecutionState: { Operations: [...changed.values()] } };
  }

  /** GetDurableExecutionState: a page of the operations, from `marker` (an index). */
  state(arn: string, token: string, marker: string | undefined, maxItems = PAGE) {
    const execution = this.live(arn, token);
    const from = marker === undefined ? 0 : Number(marker);
    if (!Number.isInteger(from) || from < 0)
      throw new AwsWireError('InvalidParameterValueException', 400, 'The marker is not valid.');
    const all = [...execution.operations.values()];
    const size = Math.min(Math.max(1, maxItems), PAGE);
    const page = all.slice(from, from + size);
    return {
      Operations: page,
      ...(from + size < all.length ? { NextMarker: String(from + size) } : {}),
    };
  }

  /** Ends the execution (its EXECUTION operation too); a later checkpoint is refused. */
  end(execution: DurableExecution, ending: ExecutionEnding): void {
    if (execution.ending) return;
    execution.ending = ending;
    const root = [...execution.operations.values()][0];
    if (root) {
      root.Status = ending.status;
      root.EndTimestamp = seconds(this.now());
    }
    // Its payloads are kept from now for its retention period: the byte-seconds it committed to.
    this.write(execution, 0);
    const retained = execution.retainedByteSeconds + execution.storedBytes * execution.retentionDays * 86_400;
    this.usage?.({ executionsEnded: 1, retainedByteSeconds: retained });
  }

  /** Adds `n` payload bytes to what the execution holds, the bytes held so far counted up to now. */
  private write(execution: DurableExecution, n: number): void {
    const now = this.now();
    execution.retainedByteSeconds +=
      (execution.storedBytes * Math.max(0, now - execution.heldSinceMs)) / 1000;
    execution.heldSinceMs = now;
    execution.storedBytes += n;
  }

  /** The durable operations an update is billed as (the header above says which). */
  private billedOperations(execution: DurableExecution, update: OperationUpdate): number {
    if (update.Type === 'EXECUTION') return 0;
    if (update.Type === 'STEP') return update.Action === 'START' || update.Action === 'CANCEL' ? 0 : 1;
    return execution.operations.has(update.Id) ? 0 : 1;
  }

  /**
   * What the execution waits for before its next invocation: the earliest of its waits' ends and
   * its steps' next attempts still ahead (epoch ms), with the operations due by `atMs` made ready
   * (a wait SUCCEEDED, a step READY): their ids go to the next invocation as UpdatedOperationIds.
   */
  due(execution: DurableExecution, atMs: number): { nextMs: number | undefined; updatedIds: string[] } {
    let nextMs: number | undefined;
    const updatedIds: string[] = [];
    for (const op of execution.operations.values()) {
      const waitEnd = op.Status === 'STARTED' ? op.WaitDetails?.ScheduledEndTimestamp : undefined;
      const retryAt = op.Status === 'PENDING' ? op.StepDetails?.NextAttemptTimestamp : undefined;
      const at = (waitEnd ?? retryAt) === undefined ? undefined : (waitEnd ?? retryAt)! * 1000;
      if (at === undefined) continue;
      if (at <= atMs) {
        op.Status = waitEnd !== undefined ? 'SUCCEEDED' : 'READY';
        if (waitEnd !== undefined) op.EndTimestamp = seconds(atMs);
        updatedIds.push(op.Id);
      } else nextMs = nextMs === undefined ? at : Math.min(nextMs, at);
    }
    return { nextMs, updatedIds };
  }

  private live(arn: string, token: string): DurableExecution {
    const execution = this.byArn.get(arn);
    if (!execution)
      throw new AwsWireError('ResourceNotFoundException', 404, `Durable execution not found: ${arn}`);
    if (execution.ending)
      throw new AwsWireError('InvalidParameterValueException', 400, 'The durable execution has ended.');
    if (token !== execution.token)
      throw new AwsWireError('InvalidParameterValueException', 400, 'Invalid checkpoint token.');
    return execution;
  }

  private apply(execution: DurableExecution, update: OperationUpdate): WireOperation {
    const now = this.now();
    const known = execution.operations.get(update.Id);
    if (update.Type === 'EXECUTION') {
      // The SDK checkpoints a result too large for its answer as the execution's own success;
      // the execution ends with the invocation's answer, which follows.
      if (update.Action === 'SUCCEED') execution.checkpointedResult = update.Payload;
      return [...execution.operations.values()][0]!;
    }
    const op: WireOperation = known ?? {
      Id: update.Id,
      ...(update.ParentId ? { ParentId: update.ParentId } : {}),
      ...(update.Name ? { Name: update.Name } : {}),
      Type: update.Type,
      ...(update.SubType ? { SubType: update.SubType } : {}),
      StartTimestamp: seconds(now),
      Status: 'STARTED',
    };
    switch (update.Action) {
      case 'START':
        op.Status = 'STARTED';
        if (update.Type === 'STEP')
          op.StepDetails = { ...op.StepDetails, Attempt: op.StepDetails?.Attempt ?? 0 };
        if (update.Type === 'WAIT')
          op.WaitDetails = {
            ScheduledEndTimestamp: seconds(now + (update.WaitOptions?.WaitSeconds ?? 0) * 1000),
          };
        if (update.Type === 'CONTEXT' && update.ContextOptions)
          op.ContextDetails = { ReplayChildren: update.ContextOptions.ReplayChildren ?? false };
        break;
      case 'SUCCEED':
        op.Status = 'SUCCEEDED';
        op.EndTimestamp = seconds(now);
        if (update.Type === 'CONTEXT') op.ContextDetails = { ...op.ContextDetails, Result: update.Payload };
        else op.StepDetails = { ...op.StepDetails, Result: update.Payload };
        break;
      case 'FAIL':
        op.Status = 'FAILED';
        op.EndTimestamp = seconds(now);
        if (update.Type === 'CONTEXT') op.ContextDetails = { ...op.ContextDetails, Error: update.Error };
        else op.StepDetails = { ...op.StepDetails, Error: update.Error };
        break;
      case 'RETRY':
        op.Status = 'PENDING';
        op.StepDetails = {
          ...op.StepDetails,
          Attempt: (op.StepDetails?.Attempt ?? 0) + 1,
          NextAttemptTimestamp: seconds(now + (update.StepOptions?.NextAttemptDelaySeconds ?? 0) * 1000),
          ...(update.Error ? { Error: update.Error } : {}),
        };
        break;
      case 'CANCEL':
        op.Status = 'CANCELLED';
        op.EndTimestamp = seconds(now);
        break;
    }
    execution.operations.set(op.Id, op);
    return op;
  }
}
