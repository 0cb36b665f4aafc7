import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, type TransactOp } from '../../ports/store.ts';
import { nextRun } from '../../shared/cron.ts';
import { defineEntity } from '../entity.ts';
import { REVISION_OP, updateWithRevision } from '../revision.ts';
import { scheduleSchema } from './schedule-schemas.ts';

/** The stored fields: the API's schedule object (schedule-schemas.ts) plus its author. */
const scheduleFields = {
  ...scheduleSchema.shape,
  id: z.string(),
  workspace_id: z.string(),
  /** True when the platform disabled it after max_consecutive_failures; cleared on re-enable. */
  auto_disabled: z.boolean().default(false),
  created_by: z.string(),
};

export type Schedule = z.output<z.ZodObject<typeof scheduleFields>>;

/** A stored schedule: the record, its revision (every writer conditions on it) and the secret hash. */
export interface StoredSchedule {
  schedule: Schedule;
  rev: number;
  webhookSecretHash: string | undefined;
  deletedAt: string | undefined;
}

/** The key shapes of a schedule's partition and indexes. */
export const scheduleKeys = {
  /** The record, by id (webhook triggers and EventBridge arrive with the id only). */
  schedule: (id: string) => ({ pk: `SCHEDULE#${id}`, sk: 'SCHEDULE' }),
  /** GSI1 partition of a workspace's schedules, by creation time. */
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#SCHEDULES`,
  /** GSI2 partition of enabled cron schedules by next run time: what the local scheduler reads. */
  due: 'SCHEDULES#DUE',
  /** At-most-once guard of one (schedule, scheduled time) slot. */
  slot: (id: string, scheduledTime: string) => ({ pk: `SCHEDULE#${id}`, sk: `SLOT#${scheduledTime}` }),
  /** A webhook idempotency key (hashed) and the run it started. */
  idempotency: (id: string, keyHash: string) => ({ pk: `SCHEDULE#${id}`, sk: `IDEM#${keyHash}` }),
  /** A run in flight: written when it starts, removed with its record (schedule-run-inflight.ts). */
  inflight: (id: string, runId: string) => ({ pk: `SCHEDULE#${id}`, sk: `INFLIGHT#${runId}` }),
  /** GSI2 partition of runs in flight, by the time after which an unfinished one was interrupted. */
  inflightDue: 'SCHEDULES#INFLIGHT',
};

/**
 * The schedule record. A deleted schedule stays as a tombstone (`deleted_at`, out of every index)
 * for its history's retention; `rev` is missing on items written before revisions existed.
 */
export const scheduleEntity = defineEntity({
  name: 'schedule',
  keys: scheduleKeys,
  schema: z.object({
    ...scheduleFields,
    rev: z.number().default(0),
    webhook_secret_hash: z.string().optional(),
    deleted_at: z.string().optional(),
  }),
  locate: (s) => {
    const due = !s.deleted_at && s.type === 'cron' && s.enabled && s.next_run_at;
    return {
      ...scheduleKeys.schedule(s.id),
      ...(s.deleted_at
        ? {}
        : { gsi1pk: scheduleKeys.ofWorkspace(s.workspace_id), gsi1sk: `${s.created_at}#${s.id}` }),
      ...(due ? { gsi2pk: scheduleKeys.due, gsi2sk: `${s.next_run_at}#${s.id}` } : {}),
    };
  },
});

export function computeNext(
  s: Pick<Schedule, 'type' | 'enabled' | 'cron_expression' | 'timezone'>,
  after: Date,
): string | null {
  if (s.type !== 'cron' || !s.enabled || !s.cron_expression) return null;
  return nextRun(s.cron_expression, s.timezone, after)?.toISOString() ?? null;
}

export function scheduleItem(
  s: Schedule,
  rev: number,
  webhookSecretHash: string | undefined,
  deletedAt?: string,
): Item {
  return scheduleEntity.toItem({
    ...s,
    rev,
    ...(webhookSecretHash && !deletedAt ? { webhook_secret_hash: webhookSecretHash } : {}),
    ...(deletedAt ? { deleted_at: deletedAt } : {}),
  });
}

export function fromScheduleItem(item: Item): StoredSchedule {
  const { rev, webhook_secret_hash, deleted_at, ...schedule } = scheduleEntity.fromItem(item);
  return { schedule, rev, webhookSecretHash: webhook_secret_hash, deletedAt: deleted_at };
}

export async function loadStoredSchedule(deps: CoreDeps, id: string): Promise<StoredSchedule | undefined> {
  const item = await deps.store.get(scheduleKeys.schedule(id));
  return item ? fromScheduleItem(item) : undefined;
}

/** The put of a new revision, conditioned on the revision it was computed from. */
export function scheduleWrite(stored: StoredSchedule, next: Schedule, extra: Partial<Item> = {}): TransactOp {
  const item = {
    ...scheduleItem(next, stored.rev + 1, stored.webhookSecretHash, stored.deletedAt),
    ...extra,
  };
  return {
    name: REVISION_OP,
    put: item as Item,
    condition:
      stored.rev === 0 ? cond.or(cond.attrNotExists('rev'), cond.eq('rev', 0)) : cond.eq('rev', stored.rev),
  };
}

/**
 * Read, decide, write under the revision condition, again on a race (another writer moved the
 * revision meanwhile). `decide` sees the stored record (tombstones included) and returns the new
 * record with items to write in the same transaction, or undefined to leave it. Other failures
 * propagate.
 */
export async function mutateSchedule<T>(
  deps: CoreDeps,
  id: string,
  decide: (stored: StoredSchedule) => { next: Schedule; items?: Item[]; result: T } | undefined,
  attempts = 20,
): Promise<
  | { status: 'written'; stored: StoredSchedule; next: Schedule; result: T }
  | { status: 'skipped' | 'contended' }
> {
  const outcome = await updateWithRevision({
    attempts,
    load: () => loadStoredSchedule(deps, id),
    decide,
    write: async (stored, decision) => {
      await deps.store.transactWrite([
        scheduleWrite(stored, decision.next),
        ...(decision.items ?? []).map((put) => ({ put })),
      ]);
    },
  });
  if (outcome.status !== 'written') return { status: outcome.status };
  const { current: stored, decision } = outcome;
  return { status: 'written', stored, next: decision.next, result: decision.result };
}
