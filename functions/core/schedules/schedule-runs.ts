import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { PlatformError } from '../../shared/errors.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import { findVersion } from '../agents/agent-lookup.ts';
import { type AuthContext, authContextOf } from '../api-keys/api-keys.ts';
import { MAX_CALL_SECONDS } from '../calls/deadline.ts';
import { callAgent } from '../calls/gateway.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import { applyRunOutcome } from './schedule-failure-streak.ts';
import { type Schedule, scheduleKeys } from './schedule-record.ts';
import { type InflightRun, inflightItem } from './schedule-run-inflight.ts';
import { type Run, type RunRecord, type RunTrigger, runItem } from './schedule-run-record.ts';

export type { Run, RunRecord, RunTrigger } from './schedule-run-record.ts';

/** How often a run refused only for a busy concurrency slot is retried before it fails. */
const CONCURRENCY_RETRIES = 6;
/** The longest those retries wait in all (the backoff below, with its jitter). */
const RETRY_BUDGET_MS = Array.from({ length: CONCURRENCY_RETRIES }, (_, k) => 100 * 2 ** k + 100).reduce(
  (a, b) => a + b,
  0,
);

/**
 * Whom a run acts as: the schedule's creator, who must still be a member of its workspace (a
 * removed member's schedules fail their runs rather than keep acting for them). The run's calls
 * count against that account's quotas, and its secrets come from the schedule's workspace.
 */
async function runAuth(deps: CoreDeps, schedule: Schedule): Promise<AuthContext> {
  const [accountItem, member] = await Promise.all([
    deps.store.get(accountKeys.account(schedule.created_by)),
    deps.store.get(memberKeys.member(schedule.workspace_id, schedule.created_by)),
  ]);
  if (!accountItem || !member) {
    throw new PlatformError(
      'FORBIDDEN',
      'The account that created this schedule is no longer a member of its workspace; recreate the schedule',
    );
  }
  return { ...authContextOf(accountItem, `schedule:${schedule.id}`), runWorkspaceId: schedule.workspace_id };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs a schedule's agent once through the same call path as an HTTP call (quotas, deadline,
 * sandbox, records), records the run, and applies its outcome to the failure streak. Never throws
 * for the agent's failure: that is the run's status.
 */
export async function executeRun(
  deps: CoreDeps,
  schedule: Schedule,
  input: Record<string, unknown>,
  trigger: RunTrigger,
  options: { scheduledTime?: string; runId?: string } = {},
): Promise<RunRecord> {
  const runId = options.runId ?? randomUUID();
  const startedAt = deps.clock.now().toISOString();
  const started = performance.now();
  let status: Run['status'] = 'success';
  let output: Record<string, unknown> | null = null;
  let error: string | null = null;
  let inflight: InflightRun | undefined;
  const [org, name] = schedule.agent.split('/') as [string, string];
  try {
    const auth = await runAuth(deps, schedule);
    const agent = await findVersion(deps, org, name, schedule.agent_version);
    if (!agent || agent.deleted_at) {
      throw new PlatformError('NOT_FOUND', `${schedule.agent}@${schedule.agent_version} no longer exists`);
    }
    const body = Buffer.from(JSON.stringify(input));
    // The run's trace if the platform dies before it ends (schedule-run-inflight.ts): past the
    // call's longest run, the concurrency retries and the grace, it is recorded as interrupted.
    const cap = Math.min(MAX_CALL_SECONDS, deps.config.maxCallSeconds);
    const runSeconds = Math.min(agent.manifest.timeout_seconds || cap, cap);
    inflight = {
      scheduleId: schedule.id,
      workspaceId: schedule.workspace_id,
      agent: schedule.agent,
      agentVersion: schedule.agent_version,
      runId,
      trigger,
      scheduledTime: options.scheduledTime ?? null,
      startedAt,
      interruptedAfter:
        deps.clock.now().getTime() + runSeconds * 1000 + RETRY_BUDGET_MS + deps.config.reconcileGraceMs,
    };
    await deps.store.put(inflightItem(inflight));
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await callAgent(deps, auth, {
          org,
          agent: name,
          version: schedule.agent_version,
          endpoint: agent.manifest.default_endpoint,
          body,
          contentType: 'application/json',
          headers: (h) => (h === 'x-platform-provider' && schedule.provider ? schedule.provider : undefined),
          requestId: `run_${runId}${attempt > 0 ? `_${attempt}` : ''}`,
        });
        output = result.body.data;
        break;
      } catch (err) {
        // All concurrency slots busy (not the daily quota, which has a reset): wait for one.
        const details =
          err instanceof PlatformError ? (err.details as Record<string, unknown> | undefined) : undefined;
        const busy =
          err instanceof PlatformError && err.code === 'RATE_LIMITED' && details?.reset === undefined;
        if (!busy || attempt >= CONCURRENCY_RETRIES) throw err;
        await sleep(100 * 2 ** attempt + Math.random() * 100);
      }
    }
  } catch (err) {
    output = null;
    if (err instanceof PlatformError) {
      status = err.code === 'TIMEOUT' ? 'timeout' : 'error';
      error = `${err.code}: ${err.message}`;
    } else {
      status = 'error';
      error = 'INTERNAL_ERROR: the run failed on the platform’s side';
      deps.logger.error('schedule run failed', {
        schedule_id: schedule.id,
        run_id: runId,
        error: String(err),
      });
    }
  }
  const record: RunRecord = {
    run_id: runId,
    status,
    duration_ms: Math.round(performance.now() - started),
    output,
    error,
    deduplicated: false,
    schedule_id: schedule.id,
    workspace_id: schedule.workspace_id,
    agent: schedule.agent,
    agent_version: schedule.agent_version,
    trigger,
    scheduled_time: options.scheduledTime ?? null,
    started_at: startedAt,
    finished_at: deps.clock.now().toISOString(),
  };
  try {
    // The record replaces the in-flight marker in one transaction.
    await deps.store.transactWrite([
      { put: runItem(record) },
      ...(inflight ? [{ delete: scheduleKeys.inflight(schedule.id, runId) }] : []),
    ]);
  } catch (err) {
    deps.logger.error('schedule run record not written', {
      schedule_id: schedule.id,
      run_id: runId,
      error: String(err),
    });
  }
  await applyRunOutcome(deps, schedule.id, record);
  deps.logger.info('schedule run finished', {
    schedule_id: schedule.id,
    run_id: runId,
    trigger,
    status,
    duration_ms: record.duration_ms,
  });
  return record;
}
