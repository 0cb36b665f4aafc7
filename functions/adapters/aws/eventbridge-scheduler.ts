import {
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type { Scheduler, ScheduleTimetable } from '../../ports/scheduler.ts';
import { toEventBridge } from '../../shared/cron.ts';

export interface EventBridgeSchedulerOptions {
  client: SchedulerClient;
  /** The schedule group every agenthost schedule lives in (lib/constructs/schedule-firing.ts). */
  groupName: string;
  /**
   * The schedule-fire Lambda, the role EventBridge Scheduler assumes to invoke it, and the SQS
   * dead-letter queue. Needed to create or update rules; functions that only remove rules (an
   * auto-disable in the fire function) are built without them.
   */
  target?: { arn: string; roleArn: string; deadLetterArn: string };
}

/** Up to two EventBridge schedules per record: `<id>-1`, and `<id>-2` for Unix OR semantics. */
export const MAX_RULES_PER_SCHEDULE = 2;
/** EventBridge retries a failed invocation this many times, within this age, then dead-letters it. */
export const FIRE_RETRY_ATTEMPTS = 3;
export const FIRE_MAX_EVENT_AGE_SECONDS = 3600;

export function ruleName(scheduleId: string, n: number): string {
  return `${scheduleId}-${n}`;
}

/**
 * The exact CreateSchedule input of rule `n` of a schedule: the converted six-field expression,
 * the schedule's IANA zone, no flexible window (fire on the minute), retries and a dead-letter
 * queue, and an input naming the schedule and the slot (`<aws.scheduler.scheduled-time>`), which
 * the fire Lambda uses as its at-most-once key.
 */
export function ruleInput(
  options: { groupName: string; target: { arn: string; roleArn: string; deadLetterArn: string } },
  schedule: ScheduleTimetable,
  expression: string,
  n: number,
): CreateScheduleInput {
  return {
    Name: ruleName(schedule.id, n),
    GroupName: options.groupName,
    ScheduleExpression: expression,
    ScheduleExpressionTimezone: schedule.timezone,
    FlexibleTimeWindow: { Mode: 'OFF' },
    State: 'ENABLED',
    Description: `agenthost schedule ${schedule.id}`,
    Target: {
      Arn: options.target.arn,
      RoleArn: options.target.roleArn,
      Input: JSON.stringify({
        schedule_id: schedule.id,
        scheduled_time: '<aws.scheduler.scheduled-time>',
      }),
      RetryPolicy: {
        MaximumRetryAttempts: FIRE_RETRY_ATTEMPTS,
        MaximumEventAgeInSeconds: FIRE_MAX_EVENT_AGE_SECONDS,
      },
      DeadLetterConfig: { Arn: options.target.deadLetterArn },
    },
  };
}

/**
 * The Scheduler port on EventBridge Scheduler. `sync` makes the schedule's rules match its
 * record: an enabled cron schedule has one rule per converted expression (updated in place,
 * created when missing); surplus rules, and every rule of a disabled or webhook schedule, are
 * deleted. Deleting a rule that is already gone is not an error, so sync is idempotent.
 */
export class EventBridgeScheduler implements Scheduler {
  readonly kind = 'eventbridge' as const;
  readonly ownsNextRun = false;
  private readonly options: EventBridgeSchedulerOptions;

  constructor(options: EventBridgeSchedulerOptions) {
    this.options = options;
  }

  async sync(schedule: ScheduleTimetable): Promise<void> {
    const expressions =
      schedule.type === 'cron' && schedule.enabled && schedule.cron_expression
        ? toEventBridge(schedule.cron_expression).expressions
        : [];
    const target = this.options.target;
    if (expressions.length > 0 && !target) {
      throw new Error('This function may only remove EventBridge schedules (no fire target configured)');
    }
    for (const [i, expression] of expressions.entries()) {
      const input = ruleInput(
        { groupName: this.options.groupName, target: target as NonNullable<typeof target> },
        schedule,
        expression,
        i + 1,
      );
      try {
        await this.options.client.send(new UpdateScheduleCommand(input));
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException)) throw err;
        await this.options.client.send(new CreateScheduleCommand(input));
      }
    }
    for (let n = expressions.length + 1; n <= MAX_RULES_PER_SCHEDULE; n++) {
      await this.deleteRule(schedule.id, n);
    }
  }

  async remove(scheduleId: string): Promise<void> {
    for (let n = 1; n <= MAX_RULES_PER_SCHEDULE; n++) await this.deleteRule(scheduleId, n);
  }

  private async deleteRule(scheduleId: string, n: number): Promise<void> {
    try {
      await this.options.client.send(
        new DeleteScheduleCommand({ Name: ruleName(scheduleId, n), GroupName: this.options.groupName }),
      );
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
  }
}
