import type { CoreDeps } from '../../ports/core-deps.ts';
import { ConditionFailedError, cond, type Item, TransactionCanceledError } from '../../ports/store.ts';
import { nextRun, nextRuns } from '../../shared/cron.ts';
import { scheduleEventItem } from './schedule-events.ts';
import { loadStoredSchedule, type StoredSchedule, scheduleKeys, scheduleWrite } from './schedule-record.ts';
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
): Promise<{ stored: StoredSchedule; slots: string[] } | undefined> {
  const taken = new Set<string>();
  for (let attempt = 0; attempt < 8; attempt++) {
    const stored = await loadStoredSchedule(deps, scheduleId);
    if (!stored || stored.deletedAt) return undefined;
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
      slot = nextRuns(s.cron_expression, s.timezone, slot, 1)[0] ?? null;
    }
    const next = { ...s, next_run_at: slot?.toISOString() ?? null };
    const events: Item[] = missed.map((m) =>
      scheduleEventItem(
        deps,
        s.id,
        'missed',
        `Slot ${m} was missed (the platform was not running); not run`,
        { scheduled_time: m },
      ),
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
    try {
      await deps.store.transactWrite([
        scheduleWrite(stored, next),
        ...slots.map((slotTime) => ({
          name: `slot ${slotTime}`,
          put: slotItem(deps, s.id, slotTime),
          condition: cond.notExists(),
        })),
        ...events.map((put) => ({ put })),
      ]);
    } catch (err) {
      if (!(err instanceof TransactionCanceledError)) throw err;
      // A slot claimed elsewhere: leave it out and decide again.
      for (const slotTime of slots) if (err.conditionFailed(`slot ${slotTime}`)) taken.add(slotTime);
      continue;
    }
    if (missedCount > 0) {
      deps.logger.warn('schedule slots missed', { schedule_id: s.id, missed: missedCount });
    }
    return { stored: { ...stored, schedule: next, rev: stored.rev + 1 }, slots };
  }
  return undefined;
}
