import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { RUNNER_PROTOCOL, type RunnerBinding } from '../../containers/sandbox-protocol.ts';
import { DEFAULT_RUNNER_SIZE, type FargateSize } from './fargate-size.ts';
import { recordPairCall } from './runner-pair-traffic.ts';
import { TABLE_SCHEMA } from './table-schema.ts';

/**
 * The warm runner pool's records (docs/sandbox-aws.md, "Warm runners"): one item per sandbox task,
 * all under one partition, so that a Query sees the whole pool and a conditional write makes a claim
 * atomic: of any number of runs claiming the same idle runner at once, exactly one gets it, and a
 * runner bound to one workspace and agent version is never handed to another (the runner refuses
 * such a claim too: functions/containers/warm-runner.ts).
 *
 * Every task counts against the ceiling, those started for a run's claim too: a task holds one of
 * `ceiling` slots (the item `SLOT#<n>`), taken by a conditional put before RunTask and held until
 * the task has surely exited (its `usableUntil`, plus the runner's own margin and ECS's stop), so
 * any number of functions starting tasks at once never hold more than the ceiling.
 *
 * DynamoDB rather than SQS: a claim must pick a runner by its binding (an idle runner of the same
 * workspace and agent version first, then an unbound one), which a queue cannot select on; the
 * table is already every run path's, with no new resource or grant to deploy.
 */

const POOL_PK = 'SANDBOX_POOL';
const slotSk = (slot: number) => `SLOT#${slot}`;
/** A runner is not claimed this close to the time it may have exited: the claim must reach it first. */
export const CLAIM_MARGIN_MS = 10_000;
/**
 * A slot is held this long past its runner's `usableUntil`: the runner waits up to CLAIM_MARGIN_MS
 * longer than the record says, then exits, and ECS takes a few seconds more to stop its task.
 */
export const EXIT_MARGIN_MS = CLAIM_MARGIN_MS + 30_000;

export interface RunnerRecord {
  runnerId: string;
  /** Its slot of the ceiling's (set when the record is added). */
  slot?: number;
  /** '' while its RunTask has not answered. */
  taskArn: string;
  /** `<workspace id>|<agent version>` once a claim has bound it; '' before. */
  binding: string;
  /** starting: its RunTask not answered yet (never claimed); idle: waits for a claim; busy: runs one. */
  status: 'starting' | 'idle' | 'busy';
  /** The claim slot (1-based) the next claim of this runner writes. */
  nextClaim: number;
  claimSlots: number;
  /**
   * Epoch ms: idle, until when the runner still waits for a claim (its idle time, its URLs'
   * expiry); busy or starting, when it will have exited at the latest if no one releases it.
   */
  usableUntil: number;
  /** Epoch ms: when its URLs expire; it serves no claim after. */
  expiresAt?: number;
  startedAt: number;
  /**
   * The protocol of the runner its task runs (RUNNER_PROTOCOL when it started); runs claim only
   * runners of the current one. Absent on records written before it was: an earlier protocol.
   */
  protocol?: number;
  /** Its task's size (CPU units, MiB). @default DEFAULT_RUNNER_SIZE */
  cpu?: number;
  memory?: number;
}

export interface ClaimedRunner {
  record: RunnerRecord;
  /** The slot this claim writes: `sandbox-inputs/pool/<runner id>/claim-<slot>.json`. */
  slot: number;
}

export const bindingKey = (b: RunnerBinding) => `${b.workspaceId}|${b.agentVersion}`;
export const sizeOf = (r: Pick<RunnerRecord, 'cpu' | 'memory'>): FargateSize => ({
  cpu: r.cpu ?? DEFAULT_RUNNER_SIZE.cpu,
  memory: r.memory ?? DEFAULT_RUNNER_SIZE.memory,
});

/** Whether `r` runs the runner this platform speaks to (RUNNER_PROTOCOL). */
const current = (r: RunnerRecord) => r.protocol === RUNNER_PROTOCOL;

const isConditionFailure = (err: unknown) => (err as Error)?.name === 'ConditionalCheckFailedException';

export class WarmRunnerPool {
  private readonly doc: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly now: () => number;
  /** Unbound idle runners the pool keeps ready (CDK context sandboxPoolMin). */
  readonly floor: number;
  /** The most sandbox tasks, busy or idle, bound or not (CDK context sandboxPoolMax). */
  readonly ceiling: number;

  constructor(options: {
    doc: DynamoDBDocumentClient;
    tableName: string;
    floor: number;
    ceiling: number;
    now?: () => number;
  }) {
    if (!(Number.isInteger(options.floor) && options.floor >= 0))
      throw new Error('pool floor must be 0 or more');
    if (!(Number.isInteger(options.ceiling) && options.ceiling >= Math.max(1, options.floor))) {
      throw new Error('pool ceiling must be at least the floor, and at least 1');
    }
    this.doc = options.doc;
    this.tableName = options.tableName;
    this.floor = options.floor;
    this.ceiling = options.ceiling;
    this.now = options.now ?? Date.now;
  }

  /** Whether `r`'s task may still run at `now` (it holds its slot until then). */
  static holds(r: RunnerRecord, now: number): boolean {
    return r.usableUntil + EXIT_MARGIN_MS > now;
  }

  /** Every runner record (the pool is at most `ceiling` items). */
  async list(): Promise<RunnerRecord[]> {
    const records: RunnerRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': POOL_PK },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of out.Items ?? []) {
        if (item.runner) records.push({ ...(item.runner as RunnerRecord), slot: slotOf(item.sk) });
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return records;
  }

  /**
   * Takes a free slot for a runner about to start (RunTask after this, never before), recording it
   * as given: `starting`, or already `busy` with the claim that starts it. Undefined when every
   * slot is held: the ceiling is reached. A slot whose runner has surely exited is free again.
   */
  async add(record: RunnerRecord): Promise<RunnerRecord | undefined> {
    const now = this.now();
    const records = await this.list();
    const held = records.filter((r) => WarmRunnerPool.holds(r, now));
    if (held.length >= this.ceiling) return undefined;
    const taken = new Set(held.map((r) => r.slot));
    for (let slot = 0; slot < this.ceiling; slot++) {
      if (taken.has(slot)) continue;
      const { slot: _, ...runner } = record;
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk: POOL_PK,
              sk: slotSk(slot),
              runner,
              // DynamoDB's TTL removes what a lost Lambda left: a day after the runner's last use.
              [TABLE_SCHEMA.ttlAttribute]: Math.ceil(record.usableUntil / 1000) + 86_400,
            },
            ConditionExpression: 'attribute_not_exists(pk) OR runner.usableUntil < :gone',
            ExpressionAttributeValues: { ':gone': now - EXIT_MARGIN_MS },
          }),
        );
        return { ...record, slot };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // Another start took it first: try the next.
      }
    }
    return undefined;
  }

  /** A started runner's task, and its state now that RunTask answered (idle, or busy with its claim). */
  async started(record: RunnerRecord, taskArn: string, status: 'idle' | 'busy'): Promise<RunnerRecord> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: POOL_PK, sk: slotSk(record.slot as number) },
        UpdateExpression: 'SET runner.taskArn = :arn, runner.#status = :status',
        ConditionExpression: 'runner.runnerId = :id',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':arn': taskArn, ':status': status, ':id': record.runnerId },
      }),
    );
    return { ...record, taskArn, status };
  }

  /**
   * Claims an idle runner for `binding`: one already bound to it first, else an unbound one (the
   * oldest, likeliest to be running already) whose size fits `size`, which this claim binds.
   * Undefined when none is free. `busyUntil`: when the runner will have exited if the run never
   * releases it (the run's deadline and the wait after it). Records past their use are removed.
   */
  async claim(
    binding: RunnerBinding,
    size: FargateSize = DEFAULT_RUNNER_SIZE,
    busyUntil?: number,
  ): Promise<ClaimedRunner | undefined> {
    const key = bindingKey(binding);
    const now = this.now();
    const records = await this.list();
    for (const r of records) if (!WarmRunnerPool.holds(r, now)) await this.remove(r);
    const usable = records.filter(
      (r) =>
        r.status === 'idle' &&
        current(r) &&
        r.slot !== undefined &&
        r.taskArn !== '' &&
        r.usableUntil > now + CLAIM_MARGIN_MS &&
        r.nextClaim <= r.claimSlots,
    );
    const unbound = usable.filter((r) => r.binding === '' && fitsSize(r, size));
    const candidates = [
      ...usable.filter((r) => r.binding === key),
      ...unbound.sort((a, b) => a.startedAt - b.startedAt),
    ];
    for (const r of candidates) {
      try {
        const until = Math.max(
          r.usableUntil,
          Math.min(busyUntil ?? r.usableUntil, r.expiresAt ?? Number.POSITIVE_INFINITY),
        );
        const out = await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: POOL_PK, sk: slotSk(r.slot as number) },
            UpdateExpression:
              'SET runner.#status = :busy, runner.binding = :key, runner.nextClaim = :next, runner.usableUntil = :until',
            ConditionExpression:
              'runner.runnerId = :id AND runner.#status = :idle AND runner.nextClaim = :slot AND (runner.binding = :key OR runner.binding = :none) AND runner.usableUntil > :needBy',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':id': r.runnerId,
              ':busy': 'busy',
              ':idle': 'idle',
              ':key': key,
              ':none': '',
              ':slot': r.nextClaim,
              ':next': r.nextClaim + 1,
              ':needBy': now + CLAIM_MARGIN_MS,
              // Busy: its slot is held until the run's end and the wait after it; release sets its
              // idle time again.
              ':until': until,
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { record: { ...(out.Attributes?.runner as RunnerRecord), slot: r.slot }, slot: r.nextClaim };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // Another run claimed it first (or it changed): try the next.
      }
    }
    return undefined;
  }

  /**
   * After a run: the runner waits for its next claim (bound as it is) until `usableUntil`. False
   * when it will not: it has no claim slot left, or would wait too little for a claim to reach it;
   * the caller then stops its task and removes it (its slot is free only then).
   */
  async release(claimed: ClaimedRunner, usableUntil: number): Promise<boolean> {
    const { record, slot } = claimed;
    if (slot >= record.claimSlots || usableUntil <= this.now() + CLAIM_MARGIN_MS) return false;
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: POOL_PK, sk: slotSk(record.slot as number) },
          UpdateExpression: 'SET runner.#status = :idle, runner.usableUntil = :until',
          ConditionExpression:
            'runner.runnerId = :id AND runner.#status = :busy AND runner.nextClaim = :next',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':id': record.runnerId,
            ':idle': 'idle',
            ':busy': 'busy',
            ':next': slot + 1,
            ':until': usableUntil,
          },
        }),
      );
      return true;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Taken out of the pool meanwhile (evicted): whoever took it stops it.
      return true;
    }
  }

  /**
   * Forgets a runner whose task is gone (it exited, failed to start, or was stopped), freeing its
   * slot; only that runner's record, never one that took its slot since.
   */
  async remove(record: Pick<RunnerRecord, 'runnerId' | 'slot'>): Promise<void> {
    if (record.slot === undefined) return;
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: POOL_PK, sk: slotSk(record.slot) },
          ConditionExpression: 'runner.runnerId = :id',
          ExpressionAttributeValues: { ':id': record.runnerId },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  /**
   * Takes out of the pool an idle runner that a run of `binding` and `size` cannot use (bound to
   * another pair, about to exit, of an earlier protocol, or unbound and too small), to stop its task and free its slot for
   * that run: the one bound elsewhere that has waited the longest first. Atomic with claims: a
   * runner that a run claims meanwhile is not taken. It is marked busy (no run claims it, and it
   * still counts); the caller stops its task, then removes it. Undefined when there is none.
   */
  async evict(binding: RunnerBinding, size: FargateSize): Promise<RunnerRecord | undefined> {
    const key = bindingKey(binding);
    const now = this.now();
    const idle = (await this.list()).filter(
      (r) =>
        r.status === 'idle' &&
        r.slot !== undefined &&
        r.taskArn !== '' &&
        WarmRunnerPool.holds(r, now) &&
        (r.usableUntil <= now + CLAIM_MARGIN_MS ||
          !current(r) ||
          (r.binding !== key && (r.binding !== '' || !fitsSize(r, size)))),
    );
    const order = [
      ...idle.filter((r) => r.binding !== '').sort((a, b) => a.usableUntil - b.usableUntil),
      ...idle.filter((r) => r.binding === ''),
    ];
    for (const r of order) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: POOL_PK, sk: slotSk(r.slot as number) },
            UpdateExpression: 'SET runner.#status = :busy',
            ConditionExpression:
              'runner.runnerId = :id AND runner.#status = :idle AND runner.nextClaim = :next',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':id': r.runnerId,
              ':idle': 'idle',
              ':busy': 'busy',
              ':next': r.nextClaim,
            },
          }),
        );
        return r;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    }
    return undefined;
  }

  /** How many unbound runners to start now: up to the floor of idle unbound ones, within the ceiling. */
  async deficit(): Promise<number> {
    const now = this.now();
    const live = (await this.list()).filter((r) => WarmRunnerPool.holds(r, now));
    const ready = live.filter(
      (r) => r.status !== 'busy' && current(r) && r.binding === '' && r.usableUntil > now + CLAIM_MARGIN_MS,
    ).length;
    return Math.max(0, Math.min(this.floor - ready, this.ceiling - live.length));
  }

  /** Notes a call of `binding` now; its last two gaps between calls (runner-pair-traffic.ts). */
  recordCall(binding: RunnerBinding): Promise<number[]> {
    return recordPairCall(this.doc, this.tableName, bindingKey(binding), this.now());
  }
}

const fitsSize = (r: RunnerRecord, need: FargateSize) => {
  const have = sizeOf(r);
  return have.cpu >= need.cpu && have.memory >= need.memory;
};

const slotOf = (sk: unknown) => {
  const m = /^SLOT#(\d+)$/.exec(String(sk));
  return m ? Number(m[1]) : undefined;
};
