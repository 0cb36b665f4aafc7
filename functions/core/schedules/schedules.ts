import { randomBytes, randomUUID } from 'node:crypto';
import type { Deps } from '../../platform/deps.ts';
import { type FieldIssue, invalidInput, notFound, PlatformError } from '../../platform/errors.ts';
import { cond, type Item, queryAll } from '../../ports/store.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import { findLatest, findVersion } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { checkOutboundUrl } from '../alerts/outbound-url.ts';
import { hashApiKey } from '../api-keys/api-key-secret.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { isValidTimeZone, nextRun, parseCron } from './cron.ts';
import type { ScheduleCreateInput, ScheduleListQuery, ScheduleUpdateInput } from './schedule-schemas.ts';

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

export const scheduleKeys = {
  /** The record, by id (webhook triggers arrive with the id only). */
  schedule: (id: string) => ({ pk: `SCHEDULE#${id}`, sk: 'SCHEDULE' }),
  /** GSI1 partition of a workspace's schedules, by creation time. */
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#SCHEDULES`,
  /** GSI2 partition of enabled cron schedules by next run time: what the local scheduler reads. */
  due: 'SCHEDULES#DUE',
};

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
async function resolveAgent(
  deps: Deps,
  ref: string,
  workspaceId: string,
  accountId: string,
): Promise<{ agent: AgentVersion; pinned: boolean }> {
  const [path, version] = ref.split('@') as [string, string | undefined];
  const [org, name] = path.split('/') as [string, string];
  const agent = version ? await findVersion(deps, org, name, version) : await findLatest(deps, org, name);
  if (!agent || agent.deleted_at) {
    throw invalidInput([{ field: 'body.agent', message: `${ref} does not exist` }]);
  }
  if (agent.manifest.type === 'skill') {
    throw invalidInput([{ field: 'body.agent', message: `${ref} is a skill: skills are not run` }]);
  }
  if (!agent.manifest.is_public && agent.workspace_id !== workspaceId) {
    const member = await deps.store.get({ pk: `WS#${agent.workspace_id}`, sk: `MEMBER#${accountId}` });
    if (!member)
      throw invalidInput([{ field: 'body.agent', message: `${ref} is private to another workspace` }]);
  }
  return { agent, pinned: version !== undefined };
}

async function checkAlertUrl(
  deps: Deps,
  url: string | null | undefined,
  issues: FieldIssue[],
): Promise<void> {
  if (!url) return;
  const checked = await checkOutboundUrl(url, { mode: deps.config.mode });
  if (!checked.ok) issues.push({ field: 'body.alert_webhook_url', message: checked.reason });
}

function computeNext(
  deps: Deps,
  s: Pick<Schedule, 'type' | 'enabled' | 'cron_expression' | 'timezone'>,
): string | null {
  if (s.type !== 'cron' || !s.enabled || !s.cron_expression) return null;
  return nextRun(s.cron_expression, s.timezone, deps.clock.now())?.toISOString() ?? null;
}

/**
 * Creates a cron or webhook schedule (owners only; Pro and up). A webhook schedule's secret is
 * random, shown once in `webhook_url`, and stored only as a hash.
 */
export async function createSchedule(
  deps: Deps,
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
  await checkAlertUrl(deps, input.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  const { agent, pinned } = await resolveAgent(deps, input.agent, workspaceId, auth.accountId);
  const now = deps.clock.now().toISOString();
  const secret = input.type === 'webhook' ? `whs_${randomBytes(32).toString('base64url')}` : undefined;
  const schedule: Schedule = {
    id: randomUUID(),
    workspace_id: workspaceId,
    agent: `${agent.org}/${agent.name}`,
    agent_version: agent.version,
    pinned,
    auto_update: input.auto_update ?? !pinned,
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
  schedule.next_run_at = computeNext(deps, schedule);
  await deps.store.put(toItem(schedule, secret ? hashApiKey(secret) : undefined), {
    condition: cond.notExists(),
  });
  const base = deps.config.publicUrl ?? '';
  return secret ? { ...schedule, webhook_url: `${base}/webhooks/${schedule.id}/${secret}` } : schedule;
}

export async function listSchedules(
  deps: Deps,
  auth: AuthContext,
  workspaceId: string,
  query: ScheduleListQuery,
) {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, { index: 'gsi1', pk: scheduleKeys.ofWorkspace(workspaceId) });
  const all = items
    .map(fromItem)
    .filter((s) => (!query.agent || s.agent === query.agent) && (!query.type || s.type === query.type));
  return { schedules: all.slice(query.offset, query.offset + query.limit), total: all.length };
}

async function loadSchedule(
  deps: Deps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  role: 'member' | 'owner',
) {
  await requireMembership(deps, auth.accountId, workspaceId, role);
  const item = await deps.store.get(scheduleKeys.schedule(id));
  if (!item || item.workspace_id !== workspaceId) throw notFound('Schedule');
  return item;
}

export async function getSchedule(
  deps: Deps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<Schedule> {
  return fromItem(await loadSchedule(deps, auth, workspaceId, id, 'member'));
}

/**
 * Changes a schedule (owners only). Changing the cron expression or time zone recomputes the next
 * run; enabling resets consecutive_failures; setting a version pins it (auto_update off); setting
 * auto_update on resumes following the newest version.
 */
export async function updateSchedule(
  deps: Deps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  patch: ScheduleUpdateInput,
): Promise<Schedule> {
  const item = await loadSchedule(deps, auth, workspaceId, id, 'owner');
  const current = fromItem(item);
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
    if (!isValidTimeZone(patch.timezone)) {
      issues.push({
        field: 'body.timezone',
        message: 'must be an IANA time zone such as America/New_York (abbreviations such as EST are refused)',
      });
    }
    next.timezone = patch.timezone;
  }
  await checkAlertUrl(deps, patch.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  if (patch.input_data !== undefined) next.input_data = patch.input_data;
  if (patch.provider !== undefined) next.provider = patch.provider;
  if (patch.alert_webhook_url !== undefined) next.alert_webhook_url = patch.alert_webhook_url;
  if (patch.alert_on_failure_count !== undefined) next.alert_on_failure_count = patch.alert_on_failure_count;
  if (patch.max_consecutive_failures !== undefined)
    next.max_consecutive_failures = patch.max_consecutive_failures;
  if (patch.enabled !== undefined) {
    if (patch.enabled && !current.enabled) next.consecutive_failures = 0;
    next.enabled = patch.enabled;
  }
  if (patch.version !== undefined) {
    const { agent } = await resolveAgent(
      deps,
      `${current.agent}@${patch.version}`,
      workspaceId,
      auth.accountId,
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
  }
  next.next_run_at = computeNext(deps, next);
  await deps.store
    .put(toItem(next, item.webhook_secret_hash as string | undefined), {
      condition: cond.eq('updated_at', current.updated_at),
    })
    .catch(() => {
      throw new PlatformError('CONFLICT', 'The schedule changed meanwhile; fetch it and try again');
    });
  return next;
}

/** Deletes a schedule (owners only); its run history is kept (runs are separate records). */
export async function deleteSchedule(
  deps: Deps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<void> {
  await loadSchedule(deps, auth, workspaceId, id, 'owner');
  await deps.store.delete(scheduleKeys.schedule(id));
}

function toItem(s: Schedule, webhookSecretHash: string | undefined): Item {
  const due = s.type === 'cron' && s.enabled && s.next_run_at;
  return {
    ...scheduleKeys.schedule(s.id),
    ...(s as unknown as Record<string, never>),
    ...(webhookSecretHash ? { webhook_secret_hash: webhookSecretHash } : {}),
    gsi1pk: scheduleKeys.ofWorkspace(s.workspace_id),
    gsi1sk: `${s.created_at}#${s.id}`,
    ...(due ? { gsi2pk: scheduleKeys.due, gsi2sk: `${s.next_run_at}#${s.id}` } : {}),
  };
}

function fromItem(item: Item): Schedule {
  const {
    pk: _p,
    sk: _s,
    gsi1pk: _a,
    gsi1sk: _b,
    gsi2pk: _c,
    gsi2sk: _d,
    webhook_secret_hash: _h,
    ...rest
  } = item;
  return rest as unknown as Schedule;
}
