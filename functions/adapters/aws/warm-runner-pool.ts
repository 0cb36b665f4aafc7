import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { RunnerBinding } from '../../containers/sandbox-protocol.ts';
import { TABLE_SCHEMA } from './table-schema.ts';

/**
 * The warm runner pool's records (docs/sandbox-aws.md, "Warm runners"): one item per runner in the
 * platform's table, all under one partition, so that a Query sees the whole pool and a conditional
 * UpdateItem makes a claim atomic: of any number of runs claiming the same idle runner at once,
 * exactly one gets it, and a runner bound to one workspace and agent version is never handed to
 * another (the runner refuses such a claim too: functions/containers/warm-runner.ts).
 *
 * DynamoDB rather than SQS: a claim must pick a runner by its binding (an idle runner of the same
 * workspace and agent version first, then an unbound one), which a queue cannot select on; the
 * table is already every run path's, with no new resource or grant to deploy.
 */

const POOL_PK = 'SANDBOX_POOL';
const runnerSk = (runnerId: string) => `RUNNER#${runnerId}`;
/** A runner is not claimed this close to the time it may have exited: the claim must reach it first. */
export const CLAIM_MARGIN_MS = 10_000;

export interface RunnerRecord {
  runnerId: string;
  taskArn: string;
  /** `<workspace id>|<agent version>` once a claim has bound it; '' before. */
  binding: string;
  status: 'idle' | 'busy';
  /** The claim slot (1-based) the next claim of this runner writes. */
  nextClaim: number;
  claimSlots: number;
  /** Epoch ms: until when the runner still waits for a claim (its idle time, its URLs' expiry). */
  usableUntil: number;
  startedAt: number;
}

export interface ClaimedRunner {
  record: RunnerRecord;
  /** The slot this claim writes: `sandbox-inputs/pool/<runner id>/claim-<slot>.json`. */
  slot: number;
}

export const bindingKey = (b: RunnerBinding) => `${b.workspaceId}|${b.agentVersion}`;

const isConditionFailure = (err: unknown) => (err as Error)?.name === 'ConditionalCheckFailedException';

export class WarmRunnerPool {
  private readonly doc: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly now: () => number;
  /** Unbound idle runners the pool keeps ready (CDK context sandboxPoolMin). */
  readonly floor: number;
  /** The most runners, busy or idle, the pool holds (CDK context sandboxPoolMax). */
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
      for (const item of out.Items ?? []) records.push(item.runner as RunnerRecord);
      start = out.LastEvaluatedKey;
    } while (start);
    return records;
  }

  /** Records a runner just started (unbound and idle, or already claimed by the run that started it). */
  async add(record: RunnerRecord): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: POOL_PK,
          sk: runnerSk(record.runnerId),
          runner: record,
          // DynamoDB's TTL removes what a lost Lambda left: a day after the runner's last use.
          [TABLE_SCHEMA.ttlAttribute]: Math.ceil(record.usableUntil / 1000) + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /**
   * Claims an idle runner for `binding`: one already bound to it first, else an unbound one (the
   * oldest, likeliest to be running already), which this claim binds. Undefined when none is free:
   * the run then starts a task of its own. Records past their use are removed on the way.
   */
  async claim(binding: RunnerBinding): Promise<ClaimedRunner | undefined> {
    const key = bindingKey(binding);
    const now = this.now();
    const records = await this.list();
    for (const r of records) if (r.usableUntil <= now) await this.remove(r);
    const usable = records.filter(
      (r) => r.status === 'idle' && r.usableUntil > now + CLAIM_MARGIN_MS && r.nextClaim <= r.claimSlots,
    );
    const candidates = [
      ...usable.filter((r) => r.binding === key),
      ...usable.filter((r) => r.binding === '').sort((a, b) => a.startedAt - b.startedAt),
    ];
    for (const r of candidates) {
      try {
        const out = await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: POOL_PK, sk: runnerSk(r.runnerId) },
            UpdateExpression:
              'SET runner.#status = :busy, runner.binding = :key, runner.nextClaim = :next, runner.usableUntil = :until',
            ConditionExpression:
              'runner.#status = :idle AND runner.nextClaim = :slot AND (runner.binding = :key OR runner.binding = :none) AND runner.usableUntil > :needBy',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':busy': 'busy',
              ':idle': 'idle',
              ':key': key,
              ':none': '',
              ':slot': r.nextClaim,
              ':next': r.nextClaim + 1,
              ':needBy': now + CLAIM_MARGIN_MS,
              // Busy: the runner serves until the run's end; release sets its idle time again.
              ':until': r.usableUntil,
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { record: out.Attributes?.runner as RunnerRecord, slot: r.nextClaim };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // Another run claimed it first (or it changed): try the next.
      }
    }
    return undefined;
  }

  /**
   * After a run: the runner waits for its next claim (bound as it is) until `usableUntil`, or is
   * forgotten when it has no slot left or will not wait. Only from the claim that made it busy.
   */
  async release(claimed: ClaimedRunner, usableUntil: number): Promise<void> {
    const { record, slot } = claimed;
    if (slot >= record.claimSlots || usableUntil <= this.now() + CLAIM_MARGIN_MS) {
      await this.remove(record);
      return;
    }
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: POOL_PK, sk: runnerSk(record.runnerId) },
          UpdateExpression: 'SET runner.#status = :idle, runner.usableUntil = :until',
          ConditionExpression: 'runner.#status = :busy AND runner.nextClaim = :next',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':idle': 'idle',
            ':busy': 'busy',
            ':next': slot + 1,
            ':until': usableUntil,
          },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  /** Forgets a runner (it exited, failed, or is of no further use). */
  async remove(record: Pick<RunnerRecord, 'runnerId'>): Promise<void> {
    await this.doc.send(
      new DeleteCommand({ TableName: this.tableName, Key: { pk: POOL_PK, sk: runnerSk(record.runnerId) } }),
    );
  }

  /** How many unbound runners to start now: up to the floor of idle unbound ones, within the ceiling. */
  async deficit(): Promise<number> {
    const now = this.now();
    const live = (await this.list()).filter(
      (r) => r.usableUntil > now + CLAIM_MARGIN_MS || r.status === 'busy',
    );
    const ready = live.filter((r) => r.status === 'idle' && r.binding === '').length;
    return Math.max(0, Math.min(this.floor - ready, this.ceiling - live.length));
  }
}
