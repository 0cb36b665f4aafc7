import { randomBytes, randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { isValidTimeZone, parseCron } from '../../shared/cron.ts';
import { type FieldIssue, invalidInput, notFound, PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import { findLatest } from '../agents/agent-lookup.ts';
import { checkAlertUrlField, resolveAgentRef } from '../agents/agent-ref.ts';
import { hashApiKey } from '../api-keys/api-key-secret.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { sizedSlice } from '../payloads/answer-page.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { appendScheduleEvent, HISTORY_DAYS, scheduleEventItem } from './schedule-events.ts';
import { failureStreakAlert } from './schedule-failure-streak.ts';
import {
  computeNext,
  fromScheduleItem,
  type Schedule,
  type StoredSchedule,
  scheduleItem,
  scheduleKeys,
  scheduleWrite,
} from './schedule-record.ts';
import type { ScheduleCreateInput, ScheduleListQuery, ScheduleUpdateInput } from './schedule-schemas.ts';

export type { Schedule } from './schedule-record.ts';

/** Schedules are a Pro, Team and Enterprise feature (spec "Limits"): Free accounts get a clear 403. */
function requireScheduling(auth: AuthContext): void {
  if (!TIER_LIMITS[auth.tier].scheduling) {
    throw new PlatformError(
      'FORBIDDEN',
      `Scheduling is included in the Pro, Team and Enterprise plans; this account is on ${auth.tier}`,
    );
  }
}

/** The agent a schedule runs: org/agent (its newest live version) or org/agent@vN (pinned). */

/**
 * A schedule's agent: resolvable, and not a skill (skills are attached to calls, not run). `field`:
 * the body field the ref came from, which an error names (a PATCH sends `version`, not `agent`).
 */
async function resolveRunnable(
  deps: CoreDeps,
  ref: string,
  workspaceId: string,
  accountId: string,
  field = 'body.agent',
) {
  const found = await resolveAgentRef(deps, ref, workspaceId, accountId, field);
  if (found.agent.manifest.type === 'skill') {
    throw invalidInput([{ field, message: `${ref} is a skill: skills are not run` }]);
  }
  return found;
}

/**
 * Creates a cron or webhook schedule (owners only; Pro and up). A webhook schedule's secret is
 * random, shown once in `webhook_url`, and stored only as a hash.
 */
export async function createSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  input: ScheduleCreateInput,
): Promise<Schedule & { webhook_url?: string }> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  requireScheduling(auth);
  const issues: FieldIssue[] = [];
  if (input.type === 'cron') {
    if (!input.cron_expression)
      issues.push({ field: 'body.cron_expression', message: 'is required for a cron schedule' });
    else {
      const parsed = parseCron(input.cron_expression);
      if (!parsed.ok) issues.push({ field: 'body.cron_expression', message: parsed.message });
    }
  } else if (input.cron_expression) {
    issues.push({ field: 'body.cron_expression', message: 'is only for cron schedules' });
  }
  if (!isValidTimeZone(input.timezone)) {
    issues.push({
      field: 'body.timezone',
      message: 'must be an IANA time zone such as America/New_York (abbreviations such as EST are refused)',
    });
  }
  await checkAlertUrlField(deps, input.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  const { agent, pinned } = await resolveRunnable(deps, input.agent, workspaceId, auth.accountId);
  const now = deps.clock.now().toISOString();
  const secret = input.type === 'webhook' ? `whs_${randomBytes(32).toString('base64url')}` : undefined;
  const schedule: Schedule = {
    id: randomUUID(),
    workspace_id: workspaceId,
    agent: `${agent.org}/${agent.name}`,
    agent_version: agent.version,
    pinned,
    auto_update: input.auto_update ?? !pinned,
    auto_disabled: false,
    type: input.type,
    cron_expression: input.type === 'cron' ? (input.cron_expression as string) : null,
    timezone: input.timezone,
    input_data: input.input_data,
    provider: input.provider ?? null,
    enabled: input.enabled,
    consecutive_failures: 0,
    max_consecutive_failures: input.max_consecutive_failures ?? 10,
    alert_webhook_url: input.alert_webhook_url ?? null,
    alert_on_failure_count: input.alert_on_failure_count ?? 3,
    next_run_at: null,
    last_run_at: null,
    last_status: null,
    total_runs: 0,
    created_by: auth.accountId,
    created_at: now,
    updated_at: now,
  };
  schedule.next_run_at = computeNext(schedule, deps.clock.now());
  await deps.store.transactWrite([
    { put: scheduleItem(schedule, 1, secret ? hashApiKey(secret) : undefined), condition: cond.notExists() },
    {
      put: scheduleEventItem(
        deps,
        schedule.id,
        'created',
        `Created (${schedule.type}${schedule.cron_expression ? ` "${schedule.cron_expression}" ${schedule.timezone}` : ''}) running ${schedule.agent}@${schedule.agent_version}`,
      ),
    },
  ]);
  await syncScheduler(deps, schedule);
  const base = deps.config.publicUrl ?? '';
  return secret ? { ...schedule, webhook_url: `${base}/webhooks/${schedule.id}/${secret}` } : schedule;
}

export async function listSchedules(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  query: ScheduleListQuery,
) {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, { index: 'gsi1', pk: scheduleKeys.ofWorkspace(workspaceId) });
  const all = items
    .map((item) => fromScheduleItem(item).schedule)
    .filter((s) => (!query.agent || s.agent === query.agent) && (!query.type || s.type === query.type));
  // Fifty schedules of 256 KiB input_data each are 12.8 MB: pages are bounded by size too.
  const { page, next_offset } = sizedSlice(all, query.offset, query.limit);
  return { schedules: page, total: all.length, next_offset };
}

/**
 * A schedule of the workspace, for a caller with `role`: not a member gives 404 (requireMembership);
 * a deleted schedule is 404 too, unless `includeDeleted` (its run history and timeline stay readable).
 */
export async function loadSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  role: 'member' | 'owner',
  includeDeleted = false,
): Promise<StoredSchedule> {
  await requireMembership(deps, auth.accountId, workspaceId, role);
  const item = await deps.store.get(scheduleKeys.schedule(id));
  if (!item || item.workspace_id !== workspaceId) throw notFound('Schedule');
  const stored = fromScheduleItem(item);
  if (stored.deletedAt && !includeDeleted) throw notFound('Schedule');
  return stored;
}

/** Tells the scheduler about a timetable change; a failure is a 500 after the record is saved, so it is retried by the next change. */
async function syncScheduler(deps: CoreDeps, schedule: Schedule): Promise<void> {
  try {
    await deps.scheduler.sync(schedule);
  } catch (err) {
    deps.logger.error('scheduler sync failed', { schedule_id: schedule.id, error: String(err) });
    throw new PlatformError(
      'INTERNAL_ERROR',
      'The schedule was saved but its timetable could not be updated; save it again',
    );
  }
}

export async function getSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<Schedule> {
  return (await loadSchedule(deps, auth, workspaceId, id, 'member')).schedule;
}

const TZ_MESSAGE =
  'must be an IANA time zone such as America/New_York (abbreviations such as EST are refused)';

/**
 * Changes a schedule (owners only). Changing the cron expression or time zone recomputes the next
 * run; enabling resets consecutive_failures; setting a version pins it (auto_update off); setting
 * auto_update on resumes following the newest version. Each change is a timeline entry.
 */
export async function updateSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  patch: ScheduleUpdateInput,
): Promise<Schedule> {
  const stored = await loadSchedule(deps, auth, workspaceId, id, 'owner');
  const current = stored.schedule;
  const next: Schedule = { ...current, updated_at: deps.clock.now().toISOString() };
  const issues: FieldIssue[] = [];
  if (patch.cron_expression !== undefined) {
    if (current.type !== 'cron')
      issues.push({ field: 'body.cron_expression', message: 'is only for cron schedules' });
    const parsed = parseCron(patch.cron_expression);
    if (!parsed.ok) issues.push({ field: 'body.cron_expression', message: parsed.message });
    next.cron_expression = patch.cron_expression;
  }
  if (patch.timezone !== undefined) {
    if (!isValidTimeZone(patch.timezone)) issues.push({ field: 'body.timezone', message: TZ_MESSAGE });
    next.timezone = patch.timezone;
  }
  await checkAlertUrlField(deps, patch.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  const events: { type: Parameters<typeof scheduleEventItem>[2]; message: string }[] = [];
  const changed: string[] = [];
  if (patch.input_data !== undefined) next.input_data = patch.input_data;
  if (patch.provider !== undefined) next.provider = patch.provider;
  if (patch.alert_webhook_url !== undefined) next.alert_webhook_url = patch.alert_webhook_url;
  if (patch.alert_on_failure_count !== undefined) next.alert_on_failure_count = patch.alert_on_failure_count;
  if (patch.max_consecutive_failures !== undefined)
    next.max_consecutive_failures = patch.max_consecutive_failures;
  for (const field of Object.keys(patch)) {
    if (!['enabled', 'version', 'auto_update'].includes(field)) changed.push(field);
  }
  if (patch.enabled !== undefined && patch.enabled !== current.enabled) {
    if (patch.enabled) {
      next.consecutive_failures = 0;
      next.auto_disabled = false;
      events.push({ type: 'enabled', message: 'Enabled; consecutive_failures reset to 0' });
    } else {
      events.push({ type: 'disabled', message: 'Disabled' });
    }
    next.enabled = patch.enabled;
  }
  if (patch.version !== undefined) {
    const { agent } = await resolveRunnable(
      deps,
      `${current.agent}@${patch.version}`,
      workspaceId,
      auth.accountId,
      'body.version',
    );
    next.agent_version = agent.version;
    next.pinned = true;
    next.auto_update = false;
  }
  if (patch.auto_update !== undefined) {
    next.auto_update = patch.auto_update;
    if (patch.auto_update) {
      next.pinned = false;
      const latest = await findLatest(deps, ...(current.agent.split('/') as [string, string]));
      if (latest) next.agent_version = latest.version;
    }
    if (patch.auto_update !== current.auto_update) changed.push('auto_update');
  }
  if (next.agent_version !== current.agent_version) {
    events.push({
      type: 'version_updated',
      message: `Version changed from ${current.agent_version} to ${next.agent_version} (${next.pinned ? 'pinned' : 'following new versions'})`,
    });
  } else if (patch.version !== undefined && !current.pinned) {
    changed.push('pinned');
  }
  if (changed.length > 0) events.push({ type: 'updated', message: `Updated ${changed.join(', ')}` });
  next.next_run_at = computeNext(next, deps.clock.now());
  try {
    await deps.store.transactWrite([
      scheduleWrite(stored, next),
      ...events.map((e) => ({ put: scheduleEventItem(deps, id, e.type, e.message) })),
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    throw new PlatformError('CONFLICT', 'The schedule changed meanwhile; fetch it and try again');
  }
  const timetableChanged =
    next.enabled !== current.enabled ||
    next.cron_expression !== current.cron_expression ||
    next.timezone !== current.timezone;
  if (timetableChanged) await syncScheduler(deps, next);
  return next;
}

/**
 * Deletes a schedule (owners only): it stops firing, leaves listings and answers 404, and its
 * webhook secret is forgotten; its run history and timeline stay readable through .../runs and
 * .../events for HISTORY_DAYS (the record stays as a tombstone that long).
 */
export async function deleteSchedule(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<void> {
  const stored = await loadSchedule(deps, auth, workspaceId, id, 'owner');
  const now = deps.clock.now();
  const tombstone = { ...stored, deletedAt: now.toISOString() };
  try {
    await deps.store.transactWrite([
      scheduleWrite(
        tombstone,
        { ...stored.schedule, enabled: false, next_run_at: null, updated_at: now.toISOString() },
        {
          ttl: Math.floor(now.getTime() / 1000) + HISTORY_DAYS * 86_400,
        },
      ),
      { put: scheduleEventItem(deps, id, 'deleted', 'Deleted; run history kept') },
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    throw new PlatformError('CONFLICT', 'The schedule changed meanwhile; try again');
  }
  try {
    await deps.scheduler.remove(id);
  } catch (err) {
    // The fire entry drops slots of deleted schedules, so a leftover rule runs nothing.
    deps.logger.error('scheduler rules not removed', { schedule_id: id, error: String(err) });
  }
}

/**
 * POST .../test-alert: sends a schedule.failure_streak payload marked `test: true` to the alert
 * URL now (owners only) and reports whether the receiver took it. No URL set is a 400.
 */
export async function sendTestAlert(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<{ delivered: boolean; attempts: number; status_code: number | null; error: string | null }> {
  const stored = await loadSchedule(deps, auth, workspaceId, id, 'owner');
  const s = stored.schedule;
  if (!s.alert_webhook_url) {
    throw invalidInput([
      { field: 'alert_webhook_url', message: 'is not set on this schedule; set it with PATCH first' },
    ]);
  }
  const payload = {
    ...failureStreakAlert(
      s,
      s.consecutive_failures,
      s.alert_on_failure_count,
      false,
      'This is a test alert from agenthost',
    ),
    test: true,
  };
  const result = await deps.notifier.deliver({
    url: s.alert_webhook_url,
    label: `schedule.failure_streak test ${s.id}`,
    payload,
  });
  if (!result.delivered) {
    await appendScheduleEvent(deps, id, 'alert_failed', `Test alert not delivered: ${result.error}`);
  }
  return {
    delivered: result.delivered,
    attempts: result.attempts,
    status_code: result.status,
    error: result.error,
  };
}
