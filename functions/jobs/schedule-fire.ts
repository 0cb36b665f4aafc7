import { fireScheduledSlot } from '../core/schedules/schedule-fire.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

/** What each EventBridge Scheduler rule sends (adapters/aws/eventbridge-scheduler.ts, ruleInput). */
export interface ScheduleFireEvent {
  schedule_id: string;
  scheduled_time: string;
}

let deps: Promise<Deps> | undefined;

/**
 * The target of every EventBridge Scheduler rule: runs the (schedule, scheduled time) slot at most
 * once (core/schedules/schedule-fire.ts claims it with a conditional write). Duplicate deliveries
 * and the second rule of an OR pair end as `duplicate`. A malformed event is logged and dropped,
 * not retried. An infrastructure error before the claim throws: Lambda retries the asynchronous
 * invocation twice, then sends the event with its error to the schedules' dead-letter queue
 * (lib/constructs/schedule-firing.ts).
 */
export async function fire(d: Deps, event: ScheduleFireEvent): Promise<{ fired: boolean; reason?: string }> {
  if (
    typeof event?.schedule_id !== 'string' ||
    typeof event.scheduled_time !== 'string' ||
    Number.isNaN(Date.parse(event.scheduled_time))
  ) {
    d.logger.error('schedule fire event malformed; dropped', { event: JSON.stringify(event).slice(0, 200) });
    return { fired: false, reason: 'malformed' };
  }
  const outcome = await fireScheduledSlot(d, event.schedule_id, event.scheduled_time);
  d.logger.info('schedule slot', {
    schedule_id: event.schedule_id,
    scheduled_time: event.scheduled_time,
    fired: outcome.fired,
    ...(outcome.fired
      ? { status: outcome.run.status, run_id: outcome.run.run_id }
      : { reason: outcome.reason }),
  });
  return outcome.fired ? { fired: true } : { fired: false, reason: outcome.reason };
}

export async function handler(event: ScheduleFireEvent): Promise<{ fired: boolean; reason?: string }> {
  deps ??= createDeps(processConfig());
  const d = await deps;
  try {
    return await fire(d, event);
  } finally {
    // A frozen function exports nothing: the run's spans go before the invocation ends.
    await d.tracer.flush();
  }
}
