import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { sortSuffix } from '../sort-suffix.ts';
import { SCHEDULE_EVENT_TYPES } from './schedule-schemas.ts';

/**
 * A schedule's timeline (GET .../events). The spec names version_updated; the other kinds are
 * ours (docs/schedules.md): created, updated, enabled, disabled, auto_disabled, failure_alert,
 * alert_failed, missed, interrupted, deleted.
 */
const scheduleEventType = z.enum(SCHEDULE_EVENT_TYPES);

export type ScheduleEventType = z.output<typeof scheduleEventType>;

const scheduleEventSchema = z.object({
  event_id: z.string(),
  type: scheduleEventType,
  message: z.string(),
  at: z.string(),
  details: z.record(z.string(), z.unknown()).default({}),
});

export type ScheduleEvent = z.output<typeof scheduleEventSchema>;

/** Timeline entries and run records are kept this long, including after the schedule's deletion. */
export const HISTORY_DAYS = 90;

export const scheduleEventKeys = {
  /** A schedule's timeline, oldest first. */
  ofSchedule: (scheduleId: string) => `SCHEDULE#${scheduleId}#EVENTS`,
};

/** One timeline entry; its schedule's id is in its partition. */
export const scheduleEventEntity = defineEntity({
  name: 'schedule event',
  keys: scheduleEventKeys,
  schema: scheduleEventSchema,
  locate: (e, scheduleId: string) => ({
    pk: scheduleEventKeys.ofSchedule(scheduleId),
    sk: `EVENT#${e.at}#${sortSuffix()}#${e.event_id}`,
    ttl: Math.floor(Date.parse(e.at) / 1000) + HISTORY_DAYS * 86_400,
  }),
});

export function scheduleEventItem(
  deps: CoreDeps,
  scheduleId: string,
  type: ScheduleEventType,
  message: string,
  details: Record<string, unknown> = {},
  at = deps.clock.now(),
): Item {
  const event: ScheduleEvent = { event_id: randomUUID(), type, message, at: at.toISOString(), details };
  return scheduleEventEntity.toItem(event, scheduleId);
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
  return scheduleEventEntity.fromItem(item);
}
