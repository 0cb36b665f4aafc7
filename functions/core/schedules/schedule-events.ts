import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { sortSuffix } from '../sort-suffix.ts';

/**
 * A schedule's timeline (GET .../events). The spec names version_updated; the other kinds are
 * ours (docs/schedules.md): created, updated, enabled, disabled, auto_disabled, failure_alert,
 * alert_failed, missed, interrupted, deleted.
 */
export type ScheduleEventType =
  | 'created'
  | 'updated'
  | 'enabled'
  | 'disabled'
  | 'auto_disabled'
  | 'failure_alert'
  | 'alert_failed'
  | 'version_updated'
  | 'missed'
  | 'interrupted'
  | 'deleted';

export interface ScheduleEvent {
  event_id: string;
  type: ScheduleEventType;
  message: string;
  at: string;
  details: Record<string, unknown>;
}

/** Timeline entries and run records are kept this long, including after the schedule's deletion. */
export const HISTORY_DAYS = 90;

export const scheduleEventsPk = (scheduleId: string) => `SCHEDULE#${scheduleId}#EVENTS`;

export function scheduleEventItem(
  deps: CoreDeps,
  scheduleId: string,
  type: ScheduleEventType,
  message: string,
  details: Record<string, unknown> = {},
  at = deps.clock.now(),
): Item {
  const event: ScheduleEvent = { event_id: randomUUID(), type, message, at: at.toISOString(), details };
  return {
    pk: scheduleEventsPk(scheduleId),
    sk: `EVENT#${event.at}#${sortSuffix()}#${event.event_id}`,
    ...(event as unknown as Record<string, never>),
    ttl: Math.floor(at.getTime() / 1000) + HISTORY_DAYS * 86_400,
  };
}

/** Appends one entry; a failed write is logged, never thrown (the timeline must not fail a run). */
export async function appendScheduleEvent(
  deps: CoreDeps,
  scheduleId: string,
  type: ScheduleEventType,
  message: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  try {
    await deps.store.put(scheduleEventItem(deps, scheduleId, type, message, details));
  } catch (err) {
    deps.logger.error('schedule event not written', { schedule_id: scheduleId, type, error: String(err) });
  }
}

export function eventFromItem(item: Item): ScheduleEvent {
  return {
    event_id: String(item.event_id),
    type: item.type as ScheduleEventType,
    message: String(item.message),
    at: String(item.at),
    details: (item.details ?? {}) as Record<string, unknown>,
  };
}
