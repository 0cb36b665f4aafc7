import { NO_ENTRYPOINT_EXIT, PORT_CONFLICT_EXIT } from '../containers/service-protocol.ts';
import { launchService, recordStartFailure } from '../core/services/service-launch.ts';
import { loadStoredService, ofEarlierLaunch } from '../core/services/service-record.ts';
import { supervisionHooks } from '../core/services/service-supervision.ts';
import { processConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

/** The parts of an EventBridge "ECS Task State Change" event that supervision reads. */
export interface EcsTaskStateChange {
  'detail-type'?: string;
  detail?: {
    clusterArn?: string;
    group?: string;
    lastStatus?: string;
    desiredStatus?: string;
    healthStatus?: string;
    stopCode?: string;
    stoppedReason?: string;
    createdAt?: string;
    startedAt?: string;
    stoppedAt?: string;
    containers?: { name?: string; exitCode?: number; reason?: string }[];
  };
}

/**
 * Supervision in AWS: every task state change of the services cluster, through EventBridge. A
 * task that turns RUNNING and HEALTHY makes its service ready; a task that stops on its own (not
 * stopped by a deployment or a scale-in) is a crash, handed to the same decisions as locally.
 * ECS starts the replacement task itself; when the decision is to pause, the service's desired
 * count goes to 0.
 */
export async function handleTaskEvent(
  deps: Deps,
  event: EcsTaskStateChange,
): Promise<'ready' | 'crash' | 'paused' | 'ignored'> {
  const d = event.detail;
  const id = /^service:svc-([0-9a-f-]{36})$/.exec(d?.group ?? '')?.[1];
  if (!d || !id) return 'ignored';
  const hooks = supervisionHooks(deps, { healthyMs: deps.config.serviceHealthyMs });
  if (d.lastStatus === 'RUNNING' && d.healthStatus === 'HEALTHY') {
    await hooks.onReady(id, d.createdAt);
    return 'ready';
  }
  if (d.lastStatus !== 'STOPPED') return 'ignored';
  const containers = d.containers ?? [];
  const failed = containers.filter((c) => typeof c.exitCode === 'number' && c.exitCode !== 0);
  // Stopped by ECS for a deployment or a scale-in (not for failed health checks), every container
  // ending cleanly or by the stop's own SIGTERM or SIGKILL (the app's 143 when its launcher passes
  // the SIGTERM on, 137 after the stop timeout): not a crash.
  const byStop = (c: { exitCode?: number }) => c.exitCode === 143 || c.exitCode === 137;
  if (
    d.stopCode === 'ServiceSchedulerInitiated' &&
    !/health check/i.test(d.stoppedReason ?? '') &&
    failed.every(byStop)
  ) {
    return 'ignored';
  }
  if (d.stopCode === 'UserInitiated') return 'ignored';
  const app = containers.find((c) => c.name === 'app');
  const conflict = containers.some((c) => c.exitCode === PORT_CONFLICT_EXIT);
  const reason = conflict
    ? 'the app listens on port 8080, which belongs to the service gateway; listen on $PORT (3000)'
    : app?.exitCode === NO_ENTRYPOINT_EXIT
      ? 'no entrypoint: no command given, no run_command, and no known start file in the bundle'
      : failed[0]
        ? `${failed[0].name} exited with status ${failed[0].exitCode}`
        : `task stopped: ${(d.stoppedReason ?? 'unknown').slice(0, 300)}`;
  const uptimeMs =
    d.startedAt && d.stoppedAt ? Math.max(0, Date.parse(d.stoppedAt) - Date.parse(d.startedAt)) : 0;
  const decision = await hooks.onExit(id, {
    exitCode: app?.exitCode ?? null,
    signal: null,
    reason,
    uptimeMs,
    fatal: app?.exitCode === NO_ENTRYPOINT_EXIT,
    ...(d.createdAt ? { taskCreatedAt: d.createdAt } : {}),
  });
  // An earlier launch's task, reported late: the service now runs another launch, left alone.
  if (decision.stale) return 'ignored';
  if (decision.restart) return 'crash';
  await deps.serviceRunner.stop(id);
  // The record said paused before this stop reached ECS: an owner who restarted the service in
  // between (a new launch, its desired count set) had that launch's tasks stopped by it. Started
  // again, that launch runs as its restart meant (at worst a start more, when the restart's own
  // came after this stop).
  const now = await loadStoredService(deps, id);
  if (now && now.service.state !== 'paused' && ofEarlierLaunch(now, d.createdAt)) {
    // A failure is recorded on the service, as an owner's failed start is (services.ts,
    // startOrRecord), not thrown: the event's retry would find this task an earlier launch's and
    // do nothing.
    await launchService(deps, now, 'resume').catch((err: unknown) => recordStartFailure(deps, id, err));
    return 'crash';
  }
  return 'paused';
}

let deps: Promise<Deps> | undefined;

export async function handler(event: EcsTaskStateChange): Promise<string> {
  deps ??= createDeps(processConfig());
  const d = await deps;
  try {
    return await handleTaskEvent(d, event);
  } finally {
    // A frozen function exports nothing: a restart's span goes before the invocation ends.
    await d.tracer.flush();
  }
}
