import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../shared/logger.ts';
import { AwsWireError, EmulatorServer, parseJsonObject, readLimitedBody, sendJson } from './emulator-http.ts';
import { JsonStateFile } from './json-state-file.ts';
import { nextTime, parseScheduleExpression, type ScheduleExpression } from './schedule-expression.ts';
import {
  listSchedules,
  NAME,
  notFound,
  optionalString,
  type StoredSchedule,
  scheduleFromRequest,
  validation,
} from './scheduler-schedules.ts';

/*
 * A stand-in for EventBridge Scheduler on loopback: its restJson1 API (CreateSchedule POST,
 * UpdateSchedule PUT, GetSchedule GET, DeleteSchedule DELETE on /schedules/{Name}, ListSchedules
 * GET /schedules), so the unchanged SchedulerClient (AWS_ENDPOINT_URL_SCHEDULER) manages schedules
 * here; and the firing: each ENABLED schedule invokes its target at its times, through an injected
 * `invokeAsync` (for a Lambda target, an asynchronous invoke), with the schedule's retry policy and
 * dead-letter record. Schedules persist in a JSON file; retries in flight do not.
 */

export interface SchedulerEmulatorOptions {
  /** Where the state file (scheduler.json) lives. */
  dataDir: string;
  /** Delivers one event to a target: what EventBridge Scheduler does for a Lambda target. */
  invokeAsync: (targetArn: string, input: string) => Promise<void>;
  /** Schedule groups that exist besides `default` (the stack's own group). */
  groups?: string[];
  region?: string;
  accountId?: string;
  now?: () => Date;
  /** The wait before retry `attempt` (1-based) of a failed delivery; exponential from 1 s by default. */
  retryDelayMs?: (attempt: number) => number;
  logger?: Logger;
}

/** An event whose retries ran out: what EventBridge Scheduler sends to the schedule's SQS dead-letter queue. */
export interface DeadLetter {
  deadLetterArn: string;
  /** The event as the target would have received it (context attributes filled in). */
  body: string;
  attributes: {
    ERROR_CODE: string;
    ERROR_MESSAGE: string;
    EXHAUSTED_RETRY_CONDITION: 'MaximumRetryAttempts' | 'MaximumEventAgeInSeconds';
    RETRY_ATTEMPTS: string;
    SCHEDULE_ARN: string;
    TARGET_ARN: string;
  };
  scheduledTime: string;
  time: string;
}

interface State {
  schedules: StoredSchedule[];
}

interface Delivery {
  schedule: StoredSchedule;
  scheduledTime: number;
  attempt: number;
  dueAt: number;
}

/** EventBridge Scheduler's defaults: 185 retries within 24 hours. */
const DEFAULT_RETRY_ATTEMPTS = 185;
const DEFAULT_EVENT_AGE_S = 86_400;
/** The loop re-checks at least this often, so a clock jump is noticed. */
const MAX_SLEEP_MS = 30_000;
/** Catch-up bound per schedule per wake: a long pause fires at most this many slots. */
const MAX_SLOTS_PER_WAKE = 100;
const MAX_REQUEST_BYTES = 1024 * 1024;

const key = (group: string, name: string) => `${group}\u0000${name}`;
const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export class SchedulerEmulator {
  private readonly options: SchedulerEmulatorOptions;
  private readonly region: string;
  private readonly accountId: string;
  private readonly now: () => Date;
  private readonly file: JsonStateFile<State>;
  private readonly state: State;
  private readonly groups: Set<string>;
  private readonly server: EmulatorServer;
  /** The next slot of each schedule (in memory: after a restart, slots count from the restart). */
  private readonly nextSlot = new Map<string, { expression: ScheduleExpression; next: number | null }>();
  private retries: Delivery[] = [];
  private readonly dead: DeadLetter[] = [];
  private firing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private looping = false;

  constructor(options: SchedulerEmulatorOptions) {
    this.options = options;
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.now = options.now ?? (() => new Date());
    this.groups = new Set(['default', ...(options.groups ?? [])]);
    this.file = new JsonStateFile(join(options.dataDir, 'scheduler.json'));
    this.state = this.file.load({ schedules: [] });
    const now = this.now().getTime();
    for (const s of this.state.schedules) this.plan(s, now);
    this.server = new EmulatorServer(
      (req, res) => this.handle(req, res),
      (res, e) => sendJson(res, e.status, { Message: e.message }, { 'x-amzn-errortype': e.code }),
      options.logger,
    );
  }

  /** Serves the API and starts the firing loop. */
  async listen(port: number, host: string): Promise<string> {
    const url = await this.server.listen(port, host);
    this.looping = true;
    this.arm();
    return url;
  }

  async close(): Promise<void> {
    this.looping = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.server.close();
    await this.firing;
  }

  /** A schedule group the stack defines (CreateScheduleGroup is not emulated). */
  createScheduleGroup(name: string): void {
    this.groups.add(name);
  }

  /** Events whose retries ran out, oldest first. */
  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }

  /**
   * Fires every slot due by `now` that has not fired, and every retry due by then, and waits for
   * those deliveries. The loop calls it; tests call it with a fake clock.
   */
  fireDue(now: Date = this.now()): Promise<void> {
    const run = this.firing.then(() => this.fire(now.getTime()));
    this.firing = run.catch(() => undefined);
    return run;
  }

  // ---------------------------------------------------------------------------------------------
  // Firing

  private async fire(now: number): Promise<void> {
    const deliveries: Delivery[] = [];
    for (const schedule of [...this.state.schedules]) {
      const plan = this.nextSlot.get(key(schedule.GroupName, schedule.Name));
      if (!plan || schedule.State !== 'ENABLED') continue;
      let fired = 0;
      while (plan.next !== null && plan.next <= now) {
        if (fired++ < MAX_SLOTS_PER_WAKE) {
          deliveries.push({ schedule, scheduledTime: plan.next, attempt: 1, dueAt: plan.next });
        }
        plan.next = this.following(schedule, plan.expression, plan.next);
      }
      if (fired > MAX_SLOTS_PER_WAKE) {
        this.options.logger?.warn('scheduler emulator skipped slots after a pause', {
          schedule: schedule.Name,
          skipped: fired - MAX_SLOTS_PER_WAKE,
        });
      }
      // A schedule past its last time deletes itself when asked to.
      if (plan.next === null && schedule.ActionAfterCompletion === 'DELETE') this.remove(schedule);
    }
    const due = this.retries.filter((d) => d.dueAt <= now);
    this.retries = this.retries.filter((d) => d.dueAt > now);
    await Promise.all([...deliveries, ...due].map((d) => this.deliver(d, now)));
  }

  private async deliver(d: Delivery, now: number): Promise<void> {
    const target = d.schedule.Target;
    const input = this.render(d);
    try {
      await this.options.invokeAsync(target.Arn, input);
      return;
    } catch (err) {
      const maxRetries = target.RetryPolicy?.MaximumRetryAttempts ?? DEFAULT_RETRY_ATTEMPTS;
      const maxAgeMs = (target.RetryPolicy?.MaximumEventAgeInSeconds ?? DEFAULT_EVENT_AGE_S) * 1000;
      const dueAt = now + (this.options.retryDelayMs ?? defaultRetryDelay)(d.attempt);
      const exhausted =
        d.attempt > maxRetries
          ? 'MaximumRetryAttempts'
          : dueAt - d.scheduledTime > maxAgeMs
            ? 'MaximumEventAgeInSeconds'
            : undefined;
      this.options.logger?.warn('scheduled delivery failed', {
        schedule: d.schedule.Name,
        scheduled_time: isoSeconds(d.scheduledTime),
        attempt: d.attempt,
        error: String((err as Error)?.message ?? err),
      });
      if (!exhausted) {
        this.retries.push({ ...d, attempt: d.attempt + 1, dueAt });
        this.arm();
        return;
      }
      const deadLetterArn = target.DeadLetterConfig?.Arn;
      const letter: DeadLetter = {
        deadLetterArn: deadLetterArn ?? '',
        body: input,
        attributes: {
          ERROR_CODE: (err as Error)?.name ?? 'Error',
          ERROR_MESSAGE: String((err as Error)?.message ?? err),
          EXHAUSTED_RETRY_CONDITION: exhausted,
          RETRY_ATTEMPTS: String(d.attempt - 1),
          SCHEDULE_ARN: d.schedule.Arn,
          TARGET_ARN: target.Arn,
        },
        scheduledTime: isoSeconds(d.scheduledTime),
        time: new Date(now).toISOString(),
      };
      // Without a dead-letter queue the service drops the event; either way it is logged.
      if (deadLetterArn) this.dead.push(letter);
      this.options.logger?.error(
        deadLetterArn ? 'scheduled event dead-lettered' : 'scheduled event dropped',
        {
          schedule: d.schedule.Name,
          scheduled_time: letter.scheduledTime,
          condition: exhausted,
          dead_letter_arn: deadLetterArn,
        },
      );
    }
  }

  /** The target's Input with EventBridge Scheduler's context attributes filled in. */
  private render(d: Delivery): string {
    const input = d.schedule.Target.Input ?? '{}';
    return input
      .replaceAll('<aws.scheduler.schedule-arn>', d.schedule.Arn)
      .replaceAll('<aws.scheduler.scheduled-time>', isoSeconds(d.scheduledTime))
      .replaceAll('<aws.scheduler.execution-id>', randomBytes(8).toString('hex'))
      .replaceAll('<aws.scheduler.attempt-number>', String(d.attempt));
  }

  /** Sleeps until the next slot or retry (at most 30 s), fires, and sleeps again. */
  private arm(): void {
    if (!this.looping) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.now().getTime();
    let next = now + MAX_SLEEP_MS;
    for (const s of this.state.schedules) {
      const slot = this.nextSlot.get(key(s.GroupName, s.Name))?.next;
      if (s.State === 'ENABLED' && slot != null) next = Math.min(next, slot);
    }
    for (const r of this.retries) next = Math.min(next, r.dueAt);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.fireDue()
          .catch((err: unknown) =>
            this.options.logger?.error('scheduler loop failed', { error: String(err) }),
          )
          .finally(() => this.arm());
      },
      Math.max(0, next - now),
    );
    this.timer.unref?.();
  }

  private plan(schedule: StoredSchedule, from: number): void {
    const expression = parseScheduleExpression(
      schedule.ScheduleExpression,
      schedule.ScheduleExpressionTimezone ?? 'UTC',
    );
    // A slot at the very moment of the change counts, as a rate's first slot does.
    this.nextSlot.set(key(schedule.GroupName, schedule.Name), {
      expression,
      next: this.following(schedule, expression, from - 1),
    });
  }

  /** The schedule's first time after `after` within its start and end dates. */
  private following(schedule: StoredSchedule, expression: ScheduleExpression, after: number): number | null {
    const start = schedule.StartDate !== undefined ? schedule.StartDate * 1000 : undefined;
    const anchor = start ?? schedule.LastModificationDate * 1000;
    const t = nextTime(expression, start !== undefined ? Math.max(after, start - 1) : after, anchor);
    if (t === null) return null;
    if (schedule.EndDate !== undefined && t > schedule.EndDate * 1000) return null;
    return t;
  }

  // ---------------------------------------------------------------------------------------------
  // API

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://scheduler');
    const raw = await readLimitedBody(req, MAX_REQUEST_BYTES, () =>
      validation('The request is larger than this API accepts.'),
    );
    if (url.pathname === '/schedules' && req.method === 'GET') {
      sendJson(res, 200, listSchedules(this.state.schedules, url.searchParams));
      return;
    }
    const m = /^\/schedules\/([^/]+)$/.exec(url.pathname);
    if (!m) throw new AwsWireError('UnknownOperationException', 404, 'The operation is not supported.');
    let name: string;
    try {
      name = decodeURIComponent(m[1]!);
    } catch {
      throw validation('The schedule name is not valid URL encoding.');
    }
    if (!NAME.test(name)) throw validation(`Invalid schedule name ${name.slice(0, 64)}.`);
    switch (req.method) {
      case 'POST':
        sendJson(res, 200, { ScheduleArn: this.write(name, parseJsonObject(raw), 'create').Arn });
        return;
      case 'PUT':
        sendJson(res, 200, { ScheduleArn: this.write(name, parseJsonObject(raw), 'update').Arn });
        return;
      case 'GET':
        sendJson(res, 200, this.find(name, url.searchParams.get('groupName')));
        return;
      case 'DELETE':
        this.remove(this.find(name, url.searchParams.get('groupName')));
        sendJson(res, 200, {});
        return;
      default:
        throw new AwsWireError('UnknownOperationException', 404, 'The operation is not supported.');
    }
  }

  private find(name: string, groupName: string | null): StoredSchedule {
    const group = groupName || 'default';
    const schedule = this.state.schedules.find((s) => s.Name === name && s.GroupName === group);
    if (!schedule) throw notFound(`Schedule ${name} does not exist.`);
    return schedule;
  }

  private remove(schedule: StoredSchedule): void {
    this.state.schedules = this.state.schedules.filter((s) => s !== schedule);
    this.nextSlot.delete(key(schedule.GroupName, schedule.Name));
    // Deliveries already failing stop with their schedule.
    this.retries = this.retries.filter((d) => d.schedule !== schedule);
    this.file.save(this.state);
  }

  /** CreateSchedule and UpdateSchedule: both carry the whole schedule (an update replaces every field). */
  private write(name: string, body: Record<string, unknown>, mode: 'create' | 'update'): StoredSchedule {
    const group = optionalString(body, 'GroupName') ?? 'default';
    if (!NAME.test(group)) throw validation(`Invalid schedule group name ${group.slice(0, 64)}.`);
    if (!this.groups.has(group)) throw notFound(`Schedule group ${group} does not exist.`);
    const existing = this.state.schedules.find((s) => s.Name === name && s.GroupName === group);
    if (mode === 'create' && existing) {
      throw new AwsWireError('ConflictException', 409, `Schedule ${name} already exists.`);
    }
    if (mode === 'update' && !existing) throw notFound(`Schedule ${name} does not exist.`);
    const now = this.now().getTime();
    const schedule = scheduleFromRequest(name, group, body, existing, {
      now,
      region: this.region,
      accountId: this.accountId,
    });
    if (existing) this.remove(existing);
    this.state.schedules.push(schedule);
    this.file.save(this.state);
    this.plan(schedule, now);
    this.arm();
    return schedule;
  }
}

/** EventBridge Scheduler backs off exponentially; here 1 s, 2 s, 4 s ... up to 5 minutes. */
function defaultRetryDelay(attempt: number): number {
  return Math.min(300_000, 1000 * 2 ** (attempt - 1));
}
