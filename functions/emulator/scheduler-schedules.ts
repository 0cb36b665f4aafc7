/**
 * EventBridge Scheduler's schedules as its API carries them (scheduler-emulator.ts): the stored
 * shape, the checks of a CreateSchedule or UpdateSchedule body and the schedule it makes, and the
 * ListSchedules page. The wire's errors are AwsWireErrors, as the service answers them.
 */
import { AwsWireError } from './emulator-http.ts';
import { isTimeZone, parseScheduleExpression, ScheduleExpressionError } from './schedule-expression.ts';

/** A schedule as the wire carries it (timestamps in epoch seconds). */
export interface StoredSchedule {
  Name: string;
  GroupName: string;
  Arn: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  StartDate?: number;
  EndDate?: number;
  Description?: string;
  State: 'ENABLED' | 'DISABLED';
  FlexibleTimeWindow: { Mode: string; MaximumWindowInMinutes?: number };
  Target: Target;
  ActionAfterCompletion?: string;
  KmsKeyArn?: string;
  CreationDate: number;
  LastModificationDate: number;
}

export interface Target {
  Arn: string;
  RoleArn: string;
  Input?: string;
  RetryPolicy?: { MaximumRetryAttempts?: number; MaximumEventAgeInSeconds?: number };
  DeadLetterConfig?: { Arn?: string };
  [other: string]: unknown;
}

export const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;

export const validation = (message: string) => new AwsWireError('ValidationException', 400, message);
export const notFound = (message: string) => new AwsWireError('ResourceNotFoundException', 404, message);

/**
 * The schedule a CreateSchedule or UpdateSchedule body describes (both carry the whole schedule),
 * checked as the service checks it, made at `now` (ms); `existing` keeps its CreationDate.
 */
export function scheduleFromRequest(
  name: string,
  group: string,
  body: Record<string, unknown>,
  existing: StoredSchedule | undefined,
  at: { now: number; region: string; accountId: string },
): StoredSchedule {
  const expression = requiredString(body, 'ScheduleExpression');
  if (expression.length > 256) throw validation('ScheduleExpression must be at most 256 characters.');
  const timezone = optionalString(body, 'ScheduleExpressionTimezone');
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw validation(`Invalid ScheduleExpressionTimezone ${timezone.slice(0, 50)}.`);
  }
  try {
    parseScheduleExpression(expression, timezone ?? 'UTC');
  } catch (err) {
    if (err instanceof ScheduleExpressionError) throw validation(err.message);
    throw err;
  }
  const state = optionalString(body, 'State') ?? 'ENABLED';
  if (state !== 'ENABLED' && state !== 'DISABLED') throw validation(`Invalid State ${state.slice(0, 20)}.`);
  const after = optionalString(body, 'ActionAfterCompletion');
  if (after !== undefined && after !== 'NONE' && after !== 'DELETE') {
    throw validation(`Invalid ActionAfterCompletion ${after.slice(0, 20)}.`);
  }
  const now = at.now;
  const schedule: StoredSchedule = {
    Name: name,
    GroupName: group,
    Arn: `arn:aws:scheduler:${at.region}:${at.accountId}:schedule/${group}/${name}`,
    ScheduleExpression: expression,
    ...(timezone !== undefined ? { ScheduleExpressionTimezone: timezone } : {}),
    ...dateField(body, 'StartDate'),
    ...dateField(body, 'EndDate'),
    ...optionalField(body, 'Description'),
    State: state,
    FlexibleTimeWindow: flexibleTimeWindow(body.FlexibleTimeWindow),
    Target: target(body.Target),
    ...(after !== undefined ? { ActionAfterCompletion: after } : {}),
    ...optionalField(body, 'KmsKeyArn'),
    CreationDate: existing?.CreationDate ?? now / 1000,
    LastModificationDate: now / 1000,
  };
  if (
    schedule.StartDate !== undefined &&
    schedule.EndDate !== undefined &&
    schedule.EndDate <= schedule.StartDate
  ) {
    throw validation('The EndDate must be after the StartDate.');
  }
  return schedule;
}

export function listSchedules(schedules: StoredSchedule[], query: URLSearchParams): unknown {
  const group = query.get('ScheduleGroup');
  const prefix = query.get('NamePrefix') ?? '';
  const state = query.get('State');
  const max = Math.min(100, Math.max(1, Number(query.get('MaxResults') ?? 100) || 100));
  const start = Number(query.get('NextToken') ?? 0) || 0;
  const matching = schedules.filter(
    (s) => (!group || s.GroupName === group) && s.Name.startsWith(prefix) && (!state || s.State === state),
  );
  const page = matching.slice(start, start + max);
  return {
    Schedules: page.map((s) => ({
      Arn: s.Arn,
      Name: s.Name,
      GroupName: s.GroupName,
      State: s.State,
      CreationDate: s.CreationDate,
      LastModificationDate: s.LastModificationDate,
      Target: { Arn: s.Target.Arn },
    })),
    ...(start + max < matching.length ? { NextToken: String(start + max) } : {}),
  };
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw validation(`${field} must be a string.`);
  return v;
}

function requiredString(body: Record<string, unknown>, field: string): string {
  const v = optionalString(body, field);
  if (!v)
    throw validation(
      `1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`,
    );
  return v;
}

function optionalField(body: Record<string, unknown>, field: string): Record<string, string> {
  const v = optionalString(body, field);
  return v === undefined ? {} : { [field]: v };
}

function dateField(body: Record<string, unknown>, field: string): Record<string, number> {
  const v = body[field];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'number' || !Number.isFinite(v)) throw validation(`${field} must be a timestamp.`);
  return { [field]: v };
}

function flexibleTimeWindow(v: unknown): StoredSchedule['FlexibleTimeWindow'] {
  if (!v || typeof v !== 'object') {
    throw validation(
      "1 validation error detected: Value null at 'flexibleTimeWindow' failed to satisfy constraint: Member must not be null",
    );
  }
  const w = v as Record<string, unknown>;
  if (w.Mode === 'OFF') return { Mode: 'OFF' };
  const max = w.MaximumWindowInMinutes;
  if (w.Mode === 'FLEXIBLE' && typeof max === 'number' && Number.isInteger(max) && max >= 1 && max <= 1440) {
    return { Mode: 'FLEXIBLE', MaximumWindowInMinutes: max };
  }
  throw validation(
    'FlexibleTimeWindow must be {Mode: OFF} or {Mode: FLEXIBLE, MaximumWindowInMinutes: 1-1440}.',
  );
}

function target(v: unknown): Target {
  if (!v || typeof v !== 'object') {
    throw validation(
      "1 validation error detected: Value null at 'target' failed to satisfy constraint: Member must not be null",
    );
  }
  const t = v as Record<string, unknown>;
  if (typeof t.Arn !== 'string' || !t.Arn || typeof t.RoleArn !== 'string' || !t.RoleArn) {
    throw validation('Target.Arn and Target.RoleArn are required.');
  }
  if (t.Input !== undefined && typeof t.Input !== 'string')
    throw validation('Target.Input must be a string.');
  const retry = t.RetryPolicy as Record<string, unknown> | undefined;
  if (retry !== undefined) {
    const attempts = retry.MaximumRetryAttempts;
    const age = retry.MaximumEventAgeInSeconds;
    if (
      attempts !== undefined &&
      (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 0 || attempts > 185)
    ) {
      throw validation('RetryPolicy.MaximumRetryAttempts must be from 0 to 185.');
    }
    if (
      age !== undefined &&
      (typeof age !== 'number' || !Number.isInteger(age) || age < 60 || age > 86_400)
    ) {
      throw validation('RetryPolicy.MaximumEventAgeInSeconds must be from 60 to 86400.');
    }
  }
  return t as Target;
}
