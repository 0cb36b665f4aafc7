import type { CoreDeps } from '../../ports/core-deps.ts';
import type { ServiceExit, SupervisionHooks } from '../../ports/service-runner.ts';
import { PlatformError } from '../../shared/errors.ts';
import { updateWithRevision } from '../revision.ts';
import { serviceRestartSpan } from '../traces/service-spans.ts';
import { serviceEventItem, writeServiceLogs } from './service-events.ts';
import {
  loadStoredService,
  ofEarlierLaunch,
  type Service,
  type StoredService,
  serviceWrite,
} from './service-record.ts';

/** How long a started app must stay up before its restart-failure counter resets (docs/services.md). */
export const HEALTHY_PERIOD_MS = 60_000;
/** Restart backoff: the first wait, doubling per consecutive failure, capped. */
export const RESTART_BACKOFF_MS = 1000;
export const RESTART_BACKOFF_CAP_MS = 30_000;

/**
 * The crash-loop alert (spec: "payload shape: not shown"; ours, docs/services.md). A type, not an
 * interface, so that it is a Record<string, unknown>, the Notifier's payload.
 */
export type CrashLoopAlert = {
  event: 'service.crash_loop';
  severity: 'warning' | 'critical';
  service_id: string;
  workspace_id: string;
  service_name: string;
  agent_name: string;
  consecutive_restart_failures: number;
  max_restart_failures: number;
  paused: boolean;
  last_error: string;
};

/**
 * Read, change, write under the revision condition, retried on a race. `change` returns the new
 * record, or undefined to leave it. Events are written in the same transaction.
 */
type TimelineEntry = { type: Parameters<typeof serviceEventItem>[2]; message: string };

export async function mutateService(
  deps: CoreDeps,
  id: string,
  change: (s: Service, stored: StoredService) => Service | undefined,
  options: {
    /** Timeline entries written in the same transaction (from the new record, when a function). */
    events?: TimelineEntry[] | ((next: Service) => TimelineEntry[]);
    port?: number | null;
    /** StoredService.launchedAt's new value. */
    launchedAt?: string;
  } = {},
): Promise<{ before: Service; after: Service } | undefined> {
  const outcome = await updateWithRevision({
    attempts: 20,
    load: () => loadStoredService(deps, id),
    decide: (stored) => change(stored.service, stored),
    write: async (stored, next) => {
      const events = typeof options.events === 'function' ? options.events(next) : (options.events ?? []);
      await deps.store.transactWrite([
        serviceWrite(stored, next, { port: options.port, launchedAt: options.launchedAt }),
        ...events.map((e) => ({ put: serviceEventItem(deps, id, e.type, e.message) })),
      ]);
    },
  });
  if (outcome.status === 'skipped') return undefined;
  if (outcome.status === 'contended') {
    throw new PlatformError('CONFLICT', 'The service changed too often meanwhile; try again');
  }
  return { before: outcome.current.service, after: outcome.decision };
}

function alertOf(s: Service, severity: 'warning' | 'critical'): CrashLoopAlert {
  return {
    event: 'service.crash_loop',
    severity,
    service_id: s.id,
    workspace_id: s.workspace_id,
    service_name: s.name,
    agent_name: s.agent,
    consecutive_restart_failures: s.consecutive_restart_failures,
    max_restart_failures: s.max_restart_failures,
    paused: s.state === 'paused',
    last_error: s.last_error ?? 'unknown',
  };
}

async function sendAlert(deps: CoreDeps, s: Service, severity: 'warning' | 'critical'): Promise<void> {
  if (!s.alert_webhook_url) return;
  await deps.notifier
    .enqueue({
      url: s.alert_webhook_url,
      label: `service.crash_loop ${severity} ${s.id}`,
      payload: alertOf(s, severity),
    })
    .catch((err) => deps.logger.error('service alert not queued', { service_id: s.id, error: String(err) }));
}

export function restartDelay(failures: number, baseMs = RESTART_BACKOFF_MS): number {
  return Math.min(RESTART_BACKOFF_CAP_MS, baseMs * 2 ** Math.max(0, failures - 1));
}

/**
 * The supervisor's decisions, per the spec's state table, shared by both deployments (locally the
 * host calls them; in AWS the ECS task state change events do): a crash counts one restart
 * failure; at half of max_restart_failures a warning alert (once per streak); at the maximum the
 * service is paused with the crash-loop flag and a critical alert; otherwise it is restarted after
 * a backoff. Staying up for the healthy period resets the counter.
 */
export function supervisionHooks(
  deps: CoreDeps,
  options: { backoffMs?: number; healthyMs?: number } = {},
): SupervisionHooks {
  const baseMs = options.backoffMs ?? RESTART_BACKOFF_MS;
  const healthyMs = options.healthyMs ?? HEALTHY_PERIOD_MS;
  return {
    async onStarting(id, detail) {
      await mutateService(
        deps,
        id,
        (s) => (s.state === 'paused' ? undefined : { ...s, health_status: 'starting' }),
        {
          events: [{ type: 'starting', message: `Starting: ${detail.command}` }],
        },
      );
    },
    async onReady(id, taskCreatedAt) {
      await mutateService(
        deps,
        id,
        (s, stored) =>
          s.state === 'paused' || ofEarlierLaunch(stored, taskCreatedAt)
            ? undefined
            : { ...s, state: 'running', health_status: 'healthy' },
        { events: [{ type: 'ready', message: 'Ready: /health answers 200' }] },
      );
    },
    async onHealthy(id) {
      await mutateService(deps, id, (s) =>
        s.consecutive_restart_failures === 0 && !s.crash_warning_sent
          ? undefined
          : { ...s, consecutive_restart_failures: 0, crash_warning_sent: false },
      );
    },
    async onExit(id, exit: ServiceExit) {
      const now = deps.clock.now().toISOString();
      let decision = { restart: false, delayMs: 0 };
      let alert: 'warning' | 'critical' | undefined;
      let stale = false;
      const result = await mutateService(
        deps,
        id,
        (s, stored) => {
          if (s.state === 'paused') return undefined;
          // A task of an earlier launch (its exit reported after an owner's restart, say): the
          // current launch's record is not its to change.
          stale = ofEarlierLaunch(stored, exit.taskCreatedAt);
          if (stale) return undefined;
          const after = afterExit(s, exit, now, { healthyMs, baseMs });
          alert = after.alert;
          decision = after.decision;
          return after.next;
        },
        {
          // In the record's transaction: a reader never sees the paused state without its entry.
          events: (next) => exitEvents(next, exit, alert, decision.delayMs),
        },
      );
      if (!result) return { restart: false, delayMs: 0, stale };
      const s = result.after;
      if (s.state === 'paused')
        deps.logger.warn('service auto-paused', {
          service_id: s.id,
          failures: s.consecutive_restart_failures,
        });
      if (alert) await sendAlert(deps, s, alert);
      if (decision.restart)
        await serviceRestartSpan(deps, {
          'agenthost.service.id': s.id,
          'agenthost.agent': `${s.agent}/${s.agent_version}`,
          'agenthost.service.restart_delay_ms': decision.delayMs,
          'agenthost.service.restart_failures': s.consecutive_restart_failures,
        });
      return decision;
    },
    async onLog(id, lines) {
      await writeServiceLogs(deps, id, lines).catch((err) =>
        deps.logger.error('service logs not written', { service_id: id, error: String(err) }),
      );
    },
  };
}

/**
 * A service's record after its process exited (a restart failure more; paused at the maximum,
 * else restarted after a backoff), the alert that exit raises, and what the host does next.
 */
function afterExit(
  s: Service,
  exit: ServiceExit,
  now: string,
  timing: { healthyMs: number; baseMs: number },
): {
  next: Service;
  alert: 'warning' | 'critical' | undefined;
  decision: { restart: boolean; delayMs: number };
} {
  // A process that had stayed up for the healthy period starts a new streak (in AWS there is no
  // timer between events: the task's uptime says it).
  const fresh = exit.uptimeMs >= timing.healthyMs;
  const failures = (fresh ? 0 : s.consecutive_restart_failures) + 1;
  if (fresh) s = { ...s, crash_warning_sent: false };
  const next: Service = {
    ...s,
    consecutive_restart_failures: failures,
    restart_count: s.restart_count + 1,
    last_error: exit.reason,
    health_status: 'unhealthy',
    updated_at: now,
  };
  if (exit.fatal || failures >= s.max_restart_failures) {
    next.state = 'paused';
    next.paused_reason = 'crash_loop';
    next.crash_loop = true;
    next.health_status = 'stopped';
    return { next, alert: 'critical', decision: { restart: false, delayMs: 0 } };
  }
  let alert: 'warning' | undefined;
  if (failures >= Math.ceil(s.max_restart_failures / 2) && !s.crash_warning_sent) {
    next.crash_warning_sent = true;
    alert = 'warning';
  }
  next.last_restart_at = now;
  return { next, alert, decision: { restart: true, delayMs: restartDelay(failures, timing.baseMs) } };
}

/** The timeline entries of a process's exit: crashed, then a warning, and paused or restarting. */
function exitEvents(
  s: Service,
  exit: ServiceExit,
  alert: 'warning' | 'critical' | undefined,
  delayMs: number,
): TimelineEntry[] {
  const events: TimelineEntry[] = [
    {
      type: 'crashed',
      message: `Exited: ${exit.reason} (failure ${s.consecutive_restart_failures} of ${s.max_restart_failures})`,
    },
  ];
  if (alert === 'warning')
    events.push({
      type: 'crash_warning',
      message: `Crash loop warning: ${s.consecutive_restart_failures} consecutive restart failures`,
    });
  if (s.state === 'paused')
    events.push({
      type: 'crash_loop_paused',
      message: exit.fatal
        ? `Paused: ${exit.reason}`
        : `Auto-paused after ${s.consecutive_restart_failures} consecutive restart failures; restart it to resume`,
    });
  else events.push({ type: 'restarted', message: `Restarting in ${delayMs} ms` });
  return events;
}
