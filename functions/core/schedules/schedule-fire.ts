import type { CoreDeps } from '../../ports/core-deps.ts';
import {
  ConditionFailedError,
  cond,
  type Item,
  MAX_TRANSACTION_OPS,
  TransactionCanceledError,
  type TransactOp,
} from '../../ports/store.ts';
import { nextRun, nextRuns } from '../../shared/cron.ts';
import { scheduleEventItem } from './schedule-events.ts';
import {
  fromScheduleItem,
  loadStoredSchedule,
  type StoredSchedule,
  scheduleKeys,
  scheduleWrite,
} from './schedule-record.ts';
import { executeRun, type RunRecord } from './schedule-runs.ts';

/**
 * Catch-up policy (docs/schedules.md): a slot is run when the platform reaches it at most this
 * late; an older slot (the platform was down, or stopped) is recorded as missed and not run.
 */
export const MISSED_GRACE_MS = 60_000;
/** Missed slots are listed one event each up to this many per pass; the rest in one summary event. */
export const MISSED_EVENTS_LISTED = 20;
/** Slot guards expire after a week; by then no delivery of that slot can still arrive. */
const SLOT_TTL_SECONDS = 7 * 86_400;
function slotItem(deps: CoreDeps, scheduleId: string, scheduledTime: string): Item {
  return {
    ...scheduleKeys.slot(scheduleId, scheduledTime),
    claimed_at: deps.clock.now().toISOString(),
    ttl: Math.floor(deps.clock.now().getTime() / 1000) + SLOT_TTL_SECONDS,
  };
}

/**
 * Claims a (schedule, scheduled time) slot with a conditional create: exactly one claimant wins,
 * however many deliveries of the slot arrive (EventBridge's at-least-once delivery, the two rules
 * of an OR expression, a restarted local loop).
 */
export async function claimSlot(deps: CoreDeps, scheduleId: string, scheduledTime: string): Promise<boolean> {
  try {
    await deps.store.put(slotItem(deps, scheduleId, scheduledTime), { condition: cond.notExists() });
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export type FireOutcome =
  | { fired: true; run: RunRecord }
  | { fired: false; reason: 'unknown' | 'deleted' | 'disabled' | 'not-cron' | 'duplicate' | 'missed' };

/**
 * The schedule-fire entry (EventBridge Scheduler in AWS): runs the slot once. A slot of a deleted,
 * disabled or webhook schedule is dropped (EventBridge may still deliver one after a change).
 */
export async function fireScheduledSlot(
  deps: CoreDeps,
  scheduleId: string,
  scheduledTime: string,
): Promise<FireOutcome> {
  const stored = await loadStoredSchedule(deps, scheduleId);
  if (!stored) return { fired: false, reason: 'unknown' };
  if (stored.deletedAt) return { fired: false, reason: 'deleted' };
  const s = stored.schedule;
  if (s.type !== 'cron') return { fired: false, reason: 'not-cron' };
  if (!s.enabled) return { fired: false, reason: 'disabled' };
  const slot = new Date(scheduledTime).toISOString();
  if (!(await claimSlot(deps, s.id, slot))) return { fired: false, reason: 'duplicate' };
  const late = deps.clock.now().getTime() - Date.parse(slot);
  if (late > MISSED_GRACE_MS + 3_600_000) {
    // EventBridge keeps retrying for up to an hour; anything older is stale by any measure.
    await deps.store.put(
      scheduleEventItem(deps, s.id, 'missed', `Slot ${slot} arrived too late and was not run`, {
        scheduled_time: slot,
      }),
    );
    return { fired: false, reason: 'missed' };
  }
  return { fired: true, run: await executeRun(deps, s, s.input_data, 'cron', { scheduledTime: slot }) };
}

/** The next cron slot after a time; a pass asks the same few (expression, zone, time) again and again. */
type NextSlot = (expression: string, timezone: string, after: Date) => Date | null;

const nextSlot: NextSlot = (expression, timezone, after) =>
  nextRuns(expression, timezone, after, 1)[0] ?? null;

/** A memo of nextSlot for the length of one pass of the loop (croner's search was 6% of a burst). */
function memoNextSlot(): NextSlot {
  const memo = new Map<string, Date | null>();
  return (expression, timezone, after) => {
    const key = `${expression}\u0000${timezone}\u0000${after.getTime()}`;
    let next = memo.get(key);
    if (next === undefined) {
      next = nextSlot(expression, timezone, after);
      memo.set(key, next);
    }
    return next;
  };
}

/** What one advance of a due schedule writes: its next revision, the claims of the slots to run, missed events. */
interface AdvancePlan {
  stored: StoredSchedule;
  slots: string[];
  missedCount: number;
  ops: TransactOp[];
}

/**
 * Decides, for a schedule whose next_run_at has come, which slots up to now are run (on time or
 * at most MISSED_GRACE_MS late, and not in `taken`) and which were missed, and the writes that
 * record it: next_run_at moved past now under the revision condition, each slot to run claimed
 * with a conditional create, and the missed slots' events. Undefined when nothing is due.
 */
function planAdvance(
  deps: CoreDeps,
  stored: StoredSchedule,
  now: Date,
  taken: ReadonlySet<string>,
  next: NextSlot,
): AdvancePlan | undefined {
  if (stored.deletedAt) return undefined;
  const s = stored.schedule;
  if (s.type !== 'cron' || !s.enabled || !s.cron_expression || !s.next_run_at) return undefined;
  if (Date.parse(s.next_run_at) > now.getTime()) return undefined;
  const slots: string[] = [];
  const missed: string[] = [];
  let missedCount = 0;
  let slot: Date | null = new Date(s.next_run_at);
  // Walk the slots from the stored next run up to now; a long outage is walked in bulk.
  while (slot && slot.getTime() <= now.getTime()) {
    if (now.getTime() - slot.getTime() > MISSED_GRACE_MS) {
      missedCount++;
      if (missed.length < MISSED_EVENTS_LISTED) missed.push(slot.toISOString());
      if (missedCount > 100_000) {
        // Skip ahead: the count is reported as "at least".
        slot = nextRun(s.cron_expression, s.timezone, new Date(now.getTime() - MISSED_GRACE_MS - 1));
        continue;
      }
    } else if (!taken.has(slot.toISOString())) {
      slots.push(slot.toISOString());
    }
    slot = next(s.cron_expression, s.timezone, slot);
  }
  const advanced = { ...s, next_run_at: slot?.toISOString() ?? null };
  const events: Item[] = missed.map((m) =>
    scheduleEventItem(deps, s.id, 'missed', `Slot ${m} was missed (the platform was not running); not run`, {
      scheduled_time: m,
    }),
  );
  if (missedCount > missed.length) {
    events.push(
      scheduleEventItem(
        deps,
        s.id,
        'missed',
        `${missedCount - missed.length} more slots were missed and not run`,
        {
          count: missedCount - missed.length,
        },
      ),
    );
  }
  return {
    stored: { ...stored, schedule: advanced, rev: stored.rev + 1 },
    slots,
    missedCount,
    ops: [
      scheduleWrite(stored, advanced),
      ...slots.map((slotTime) => ({
        name: `slot ${slotTime}`,
        put: slotItem(deps, s.id, slotTime),
        condition: cond.notExists(),
      })),
      ...events.map((put) => ({ put })),
    ],
  };
}

function logMissed(deps: CoreDeps, plan: AdvancePlan): void {
  if (plan.missedCount > 0) {
    deps.logger.warn('schedule slots missed', {
      schedule_id: plan.stored.schedule.id,
      missed: plan.missedCount,
    });
  }
}

/**
 * One step of the local loop for a schedule whose next_run_at has come: decides which slots up
 * to now are run (on time or at most MISSED_GRACE_MS late) and which were missed, records the
 * missed ones, and moves next_run_at past now, in one transaction conditioned on the revision
 * the decision was made from. The slots to run are claimed in the same transaction (a slot some
 * other delivery claimed first is dropped); returns the claimed slots, to run now.
 */
export async function advanceDueSchedule(
  deps: CoreDeps,
  scheduleId: string,
  now: Date,
  next: NextSlot = nextSlot,
): Promise<{ stored: StoredSchedule; slots: string[] } | undefined> {
  const taken = new Set<string>();
  for (let attempt = 0; attempt < 8; attempt++) {
    const stored = await loadStoredSchedule(deps, scheduleId);
    if (!stored) return undefined;
    const plan = planAdvance(deps, stored, now, taken, next);
    if (!plan) return undefined;
    try {
      await deps.store.transactWrite(plan.ops);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      // A slot claimed elsewhere: leave it out and decide again.
      for (const slotTime of plan.slots) if (err.conditionFailed(`slot ${slotTime}`)) taken.add(slotTime);
      continue;
    }
    logMissed(deps, plan);
    return { stored: plan.stored, slots: plan.slots };
  }
  return undefined;
}

/**
 * advanceDueSchedule for a page of the due index at once: each schedule is decided from the
 * record the page already holds (no read again), and the writes of many schedules share one
 * transaction, as many as fit in its 100 operations (a commit per schedule was the largest part
 * of claiming a burst). A transaction is all or nothing: when one of its schedules changed since
 * the page was read, or one of its slots was claimed elsewhere, nothing of it was written and each
 * of its schedules goes through advanceDueSchedule alone, which reads it again. The claims stay in
 * the transaction that moves next_run_at, so exactly-once holds as for one schedule.
 */
export async function advanceDueSchedules(
  deps: CoreDeps,
  items: Item[],
  now: Date,
): Promise<{ stored: StoredSchedule; slots: string[] }[]> {
  const next = memoNextSlot();
  const plans: AdvancePlan[] = [];
  for (const item of items) {
    const plan = planAdvance(deps, fromScheduleItem(item), now, new Set(), next);
    if (plan) plans.push(plan);
  }
  const chunks: AdvancePlan[][] = [];
  let size = Number.POSITIVE_INFINITY;
  for (const plan of plans) {
    if (size + plan.ops.length > MAX_TRANSACTION_OPS) {
      chunks.push([]);
      size = 0;
    }
    chunks.at(-1)?.push(plan);
    size += plan.ops.length;
  }
  const advanced: { stored: StoredSchedule; slots: string[] }[] = [];
  for (const chunk of chunks) {
    try {
      // Ops are unnamed here: a cancelled chunk is decided again schedule by schedule.
      await deps.store.transactWrite(
        chunk.flatMap((plan) => plan.ops.map(({ name: _name, ...op }) => op as TransactOp)),
      );
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      for (const plan of chunk) {
        const alone = await advanceDueSchedule(deps, plan.stored.schedule.id, now, next);
        if (alone) advanced.push(alone);
      }
      continue;
    }
    for (const plan of chunk) {
      logMissed(deps, plan);
      advanced.push({ stored: plan.stored, slots: plan.slots });
    }
  }
  return advanced;
}
