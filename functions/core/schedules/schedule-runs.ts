import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { MAX_TRANSACTION_OPS } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { MAX_CALL_SECONDS } from '../calls/deadline.ts';
import { callAgent } from '../calls/gateway.ts';
import { applyRunOutcome } from './schedule-failure-streak.ts';
import type { Schedule } from './schedule-record.ts';
import { type InflightRun, inflightItem } from './schedule-run-inflight.ts';
import { createRunLookups, type RunLookups } from './schedule-run-lookups.ts';
import type { Run, RunRecord, RunTrigger } from './schedule-run-record.ts';
import { recordFinishedRun } from './schedule-run-recording.ts';

export type { Run, RunRecord, RunTrigger } from './schedule-run-record.ts';

/** How often a run refused only for a busy concurrency slot is retried before it fails. */
const CONCURRENCY_RETRIES = 6;
/** The longest those retries wait in all (the backoff below, with its jitter). */
const RETRY_BUDGET_MS = Array.from({ length: CONCURRENCY_RETRIES }, (_, k) => 100 * 2 ** k + 100).reduce(
  (a, b) => a + b,
  0,
);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What to run: a schedule's agent once, with this input, for this trigger (and slot). */
export interface RunSpec {
  schedule: Schedule;
  input: Record<string, unknown>;
  trigger: RunTrigger;
  options?: { scheduledTime?: string; runId?: string; lookups?: RunLookups };
}

/**
 * A run whose set-up is done, about to call its agent: whom it acts as and its version looked up,
 * its start stamped, its in-flight marker built (written by the caller). A set-up that failed
 * (the creator gone, the version deleted) carries the error instead, to be recorded as the run's.
 */
interface BegunRun {
  spec: RunSpec;
  runId: string;
  startedAt: string;
  started: number;
  ready?: { auth: AuthContext; agent: AgentVersion; inflight: InflightRun };
  error?: unknown;
}

async function beginRun(deps: CoreDeps, spec: RunSpec): Promise<BegunRun> {
  const { schedule, trigger, options = {} } = spec;
  const runId = options.runId ?? randomUUID();
  const lookups = options.lookups ?? createRunLookups(deps);
  const begun = (): Pick<BegunRun, 'startedAt' | 'started'> => ({
    startedAt: deps.clock.now().toISOString(),
    started: performance.now(),
  });
  try {
    const auth = await lookups.auth(schedule);
    const agent = await lookups.version(schedule);
    if (!agent || agent.deleted_at) {
      throw new PlatformError('NOT_FOUND', `${schedule.agent}@${schedule.agent_version} no longer exists`);
    }
    // A run starts when its agent call does (the caller calls at once), not when it was claimed.
    const start = begun();
    // The run's trace if the platform dies before it ends (schedule-run-inflight.ts): past the
    // call's longest run, the concurrency retries and the grace, it is recorded as interrupted.
    const cap = Math.min(MAX_CALL_SECONDS, deps.config.maxCallSeconds);
    const runSeconds = Math.min(agent.manifest.timeout_seconds || cap, cap);
    const inflight: InflightRun = {
      scheduleId: schedule.id,
      workspaceId: schedule.workspace_id,
      agent: schedule.agent,
      agentVersion: schedule.agent_version,
      runId,
      trigger,
      scheduledTime: options.scheduledTime ?? null,
      startedAt: start.startedAt,
      interruptedAfter:
        deps.clock.now().getTime() + runSeconds * 1000 + RETRY_BUDGET_MS + deps.config.reconcileGraceMs,
    };
    return { spec, runId, ...start, ready: { auth, agent, inflight } };
  } catch (error) {
    return { spec, runId, ...begun(), error };
  }
}

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
  options: RunSpec['options'] = {},
): Promise<RunRecord> {
  const [run] = await executeRuns(deps, [{ schedule, input, trigger, options }]);
  return run as Promise<RunRecord>;
}

/**
 * executeRun for many runs at once (a burst of due slots): each is set up, their in-flight
 * markers are written together, as many to a transaction as it holds (one commit per run was a
 * large part of starting a burst), and then every call begins, none waiting behind another's
 * set-up. Resolves when all have begun, to a promise of each run's record.
 */
export async function executeRuns(deps: CoreDeps, specs: RunSpec[]): Promise<Promise<RunRecord>[]> {
  const begun = await Promise.all(specs.map((spec) => beginRun(deps, spec)));
  const ready = begun.filter((run) => run.ready);
  for (let i = 0; i < ready.length; i += MAX_TRANSACTION_OPS) {
    const chunk = ready.slice(i, i + MAX_TRANSACTION_OPS);
    try {
      await deps.store.transactWrite(
        chunk.map((run) => ({ put: inflightItem(run.ready?.inflight as InflightRun) })),
      );
    } catch (error) {
      for (const run of chunk) {
        run.error = error;
        run.ready = undefined;
      }
    }
  }
  return begun.map((run) => completeRun(deps, run));
}

async function completeRun(deps: CoreDeps, run: BegunRun): Promise<RunRecord> {
  const { schedule, input, trigger, options = {} } = run.spec;
  const { runId, startedAt, started } = run;
  let status: Run['status'] = 'success';
  let output: Record<string, unknown> | null = null;
  let error: string | null = null;
  const inflight = run.ready?.inflight;
  const [org, name] = schedule.agent.split('/') as [string, string];
  try {
    if (!run.ready) throw run.error;
    const { auth, agent } = run.ready;
    const body = Buffer.from(JSON.stringify(input));
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
          // The run keeps its whole output with its record (schedule-run-output.ts).
          wholeOutput: true,
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
  const recorded = await recordFinishedRun(deps, record, inflight !== undefined);
  await applyRunOutcome(deps, schedule.id, recorded);
  deps.logger.info('schedule run finished', {
    schedule_id: schedule.id,
    run_id: runId,
    trigger,
    status: recorded.status,
    duration_ms: recorded.duration_ms,
  });
  return recorded;
}
