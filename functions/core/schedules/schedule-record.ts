import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, TransactionCanceledError, type TransactOp } from '../../ports/store.ts';
import { nextRun } from '../../shared/cron.ts';

export type Schedule = {
  id: string;
  workspace_id: string;
  agent: string;
  agent_version: string;
  pinned: boolean;
  auto_update: boolean;
  type: 'cron' | 'webhook';
  cron_expression: string | null;
  timezone: string;
  input_data: Record<string, unknown>;
  provider: string | null;
  enabled: boolean;
  /** True when the platform disabled it after max_consecutive_failures; cleared on re-enable. */
  auto_disabled: boolean;
  consecutive_failures: number;
  max_consecutive_failures: number;
  alert_webhook_url: string | null;
  alert_on_failure_count: number;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: string | null;
  total_runs: number;
  created_by: string;
  created_at: string;
  updated_at: string;
};

/** A stored schedule: the record, its revision (every writer conditions on it) and the secret hash. */
export interface StoredSchedule {
  schedule: Schedule;
  rev: number;
  webhookSecretHash: string | undefined;
  deletedAt: string | undefined;
}

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
  /** A schedule's runs, newest last by start time. */
  runs: (id: string) => `SCHEDULE#${id}#RUNS`,
  /** A run in flight: written when it starts, removed with its record (schedule-run-inflight.ts). */
  inflight: (id: string, runId: string) => ({ pk: `SCHEDULE#${id}`, sk: `INFLIGHT#${runId}` }),
  /** GSI2 partition of runs in flight, by the time after which an unfinished one was interrupted. */
  inflightDue: 'SCHEDULES#INFLIGHT',
};

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
  const due = !deletedAt && s.type === 'cron' && s.enabled && s.next_run_at;
  return {
    ...scheduleKeys.schedule(s.id),
    ...(s as unknown as Record<string, never>),
    rev,
    ...(webhookSecretHash && !deletedAt ? { webhook_secret_hash: webhookSecretHash } : {}),
    ...(deletedAt
      ? { deleted_at: deletedAt }
      : { gsi1pk: scheduleKeys.ofWorkspace(s.workspace_id), gsi1sk: `${s.created_at}#${s.id}` }),
    ...(due ? { gsi2pk: scheduleKeys.due, gsi2sk: `${s.next_run_at}#${s.id}` } : {}),
  };
}

export function fromScheduleItem(item: Item): StoredSchedule {
  const {
    pk: _p,
    sk: _s,
    gsi1pk: _a,
    gsi1sk: _b,
    gsi2pk: _c,
    gsi2sk: _d,
    webhook_secret_hash,
    rev,
    deleted_at,
    ttl: _t,
    ...rest
  } = item;
  const schedule = { auto_disabled: false, ...rest } as unknown as Schedule;
  return {
    schedule,
    rev: typeof rev === 'number' ? rev : 0,
    webhookSecretHash: typeof webhook_secret_hash === 'string' ? webhook_secret_hash : undefined,
    deletedAt: typeof deleted_at === 'string' ? deleted_at : undefined,
  };
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
  for (let attempt = 0; attempt < attempts; attempt++) {
    const stored = await loadStoredSchedule(deps, id);
    const decision = stored ? decide(stored) : undefined;
    if (!stored || !decision) return { status: 'skipped' };
    try {
      await deps.store.transactWrite([
        scheduleWrite(stored, decision.next),
        ...(decision.items ?? []).map((put) => ({ put })),
      ]);
      return { status: 'written', stored, next: decision.next, result: decision.result };
    } catch (err) {
      if (err instanceof TransactionCanceledError && err.reasons[0] === 'ConditionalCheckFailed') continue;
      throw err;
    }
  }
  return { status: 'contended' };
}
