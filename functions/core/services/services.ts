import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { invalidInput, notFound, PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import { findVersion } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { checkAlertUrlField, resolveAgentRef } from '../agents/agent-ref.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { type LogReader, readLogPage, storeLogReader } from '../logs/log-page.ts';
import { asLogLevel, type LogLine, type LogsQuery } from '../logs/log-schemas.ts';
import { sizedSlice } from '../payloads/answer-page.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import {
  checkCodeMayLeave,
  checkDeployable,
  checkInstances,
  checkSecretsExist,
} from './service-deploy-checks.ts';
import { checkEnv, checkSettingsSize, mergeSecretNames } from './service-env.ts';
import {
  type ServiceEvent,
  type ServiceLogLine,
  serviceEventFromItem,
  serviceEventItem,
  serviceEventKeys,
} from './service-events.ts';
import { launchService, recordStartFailure } from './service-launch.ts';
import { fromServiceItem, type Service, serviceItem, serviceKeys } from './service-record.ts';
import type { ServiceDeployInput, ServiceListQuery, ServicePatchInput } from './service-schemas.ts';
import { mutateService } from './service-supervision.ts';

/** A deployed service's first record: provisioning, no restarts yet. */
function newService(
  auth: AuthContext,
  workspaceId: string,
  input: ServiceDeployInput,
  from: { agent: AgentVersion; pinned: boolean; max: number; secrets: string[]; now: string },
): Service {
  const { agent, pinned, max, secrets, now } = from;
  return {
    id: randomUUID(),
    workspace_id: workspaceId,
    name: input.name ?? agent.name,
    agent: `${agent.org}/${agent.name}`,
    agent_version: agent.version,
    auto_update: input.auto_update ?? !pinned,
    state: 'provisioning',
    paused_reason: null,
    crash_loop: false,
    health_status: 'starting',
    restart_count: 0,
    consecutive_restart_failures: 0,
    max_restart_failures: input.max_restart_failures,
    crash_warning_sent: false,
    min_instances: input.min_instances,
    max_instances: max,
    url: null,
    command: input.command ?? null,
    http: input.http,
    env: input.env,
    extra_secrets: [...new Set(input.secrets)].sort(),
    secrets,
    alert_webhook_url: input.alert_webhook_url ?? null,
    last_error: null,
    deployed_at: now,
    last_restart_at: null,
    created_by: auth.accountId,
    created_at: now,
    updated_at: now,
  };
}

/**
 * POST .../services: deploy (owners; Pro 5 services of up to 3 instances, Team 20 of 10, Free
 * none). The service record, its name guard and the account's service count are one transaction;
 * then the runner starts it (state provisioning until /health answers 200).
 */
export async function deployService(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  input: ServiceDeployInput,
): Promise<Service> {
  await requireMembership(deps, auth.accountId, workspaceId, 'owner');
  // The runner says whether it can run services here (an AWS deployment without the services
  // settings cannot); which runner it is does not matter.
  const unavailable = deps.serviceRunner.unavailableReason;
  if (unavailable) throw new PlatformError('UNPROCESSABLE', unavailable);
  const limits = TIER_LIMITS[auth.tier];
  if (limits.services === 0) {
    throw new PlatformError(
      'FORBIDDEN',
      `Always-on services are included in the Pro, Team and Enterprise plans; this account is on ${auth.tier}`,
    );
  }
  const issues = checkEnv(input.env, 'body.env');
  const max = input.max_instances ?? input.min_instances;
  checkInstances(auth, input.min_instances, max, issues, input.max_instances !== undefined);
  await checkAlertUrlField(deps, input.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  const { agent, pinned } = await resolveAgentRef(deps, input.agent, workspaceId, auth.accountId);
  checkCodeMayLeave(agent, workspaceId, input.agent);
  checkDeployable(agent, input.agent);
  const secrets = mergeSecretNames(agent.manifest.required_secrets, input.secrets);
  const tooLarge = checkSettingsSize(
    input.env,
    secrets,
    input.secrets.length > 0 ? 'body.secrets' : 'body.env',
  );
  if (tooLarge.length > 0) throw invalidInput(tooLarge);
  await checkSecretsExist(deps, workspaceId, secrets);
  const service = newService(auth, workspaceId, input, {
    agent,
    pinned,
    max,
    secrets,
    now: deps.clock.now().toISOString(),
  });
  try {
    await deps.store.transactWrite([
      { put: serviceItem(service, 1, null), condition: cond.notExists() },
      {
        name: 'name',
        put: { ...serviceKeys.name(workspaceId, service.name), service_id: service.id },
        condition: cond.notExists(),
      },
      {
        name: 'counter',
        update: serviceKeys.counter(auth.accountId),
        spec: { add: { count: 1 } },
        condition: cond.or(cond.attrNotExists('count'), cond.lt('count', limits.services)),
      },
      {
        put: serviceEventItem(
          deps,
          service.id,
          'deployed',
          `Deployed ${service.agent}@${service.agent_version}`,
        ),
      },
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    if (err.conditionFailed('name')) {
      throw new PlatformError(
        'CONFLICT',
        `A service named ${service.name} exists in this workspace; choose another name`,
      );
    }
    if (err.conditionFailed('counter')) {
      throw new PlatformError(
        'FORBIDDEN',
        `The ${auth.tier} plan allows ${limits.services} services at a time; delete one first`,
        { limit: limits.services },
      );
    }
    throw err;
  }
  await startOrRecord(deps, service.id);
  return loadService(deps, service.id);
}

/** Starts the service; a failure to start is recorded on it (last_error) and answered. */
export async function startOrRecord(deps: CoreDeps, id: string): Promise<void> {
  const stored = await loadOrNotFound(deps, id);
  try {
    await launchService(deps, stored);
  } catch (err) {
    await recordStartFailure(deps, id, err);
    throw err instanceof PlatformError
      ? err
      : new PlatformError('INTERNAL_ERROR', 'The service could not be started');
  }
}

async function loadOrNotFound(deps: CoreDeps, id: string) {
  const item = await deps.store.get(serviceKeys.service(id));
  if (!item) throw notFound('Service');
  return fromServiceItem(item);
}

export async function loadService(deps: CoreDeps, id: string): Promise<Service> {
  return (await loadOrNotFound(deps, id)).service;
}

export async function loadInWorkspace(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  role: 'member' | 'owner',
) {
  await requireMembership(deps, auth.accountId, workspaceId, role);
  const item = await deps.store.get(serviceKeys.service(id));
  if (!item || item.workspace_id !== workspaceId) throw notFound('Service');
  return fromServiceItem(item);
}

export async function listServices(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  query: ServiceListQuery,
) {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, { index: 'gsi1', pk: serviceKeys.ofWorkspace(workspaceId) });
  const all = items.map((i) => fromServiceItem(i).service);
  // 200 services with 32 KiB of env each are 6.4 MB or more: pages are bounded by size too.
  const { page, next_offset } = sizedSlice(all, query.offset, query.limit);
  return { services: page, total: all.length, next_offset };
}

/** GET .../services/{id}: the record and its 50 most recent timeline entries. */
export async function getService(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<Service & { events: ServiceEvent[] }> {
  const stored = await loadInWorkspace(deps, auth, workspaceId, id, 'member');
  const page = await deps.store.query({ pk: serviceEventKeys.ofService(id), reverse: true, limit: 50 });
  return { ...stored.service, events: page.items.map(serviceEventFromItem) };
}

/**
 * PATCH: env and secrets are replaced whole (what is sent is the new set). A change to env,
 * secrets or command restarts a running service (a few seconds of downtime) and is kept for the
 * next resume of a paused one.
 */
export async function patchService(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  patch: ServicePatchInput,
): Promise<Service> {
  const stored = await loadInWorkspace(deps, auth, workspaceId, id, 'owner');
  const current = stored.service;
  const issues = patch.env ? checkEnv(patch.env, 'body.env') : [];
  const min = patch.min_instances ?? current.min_instances;
  const max = patch.max_instances ?? Math.max(current.max_instances, min);
  checkInstances(
    auth,
    min,
    max,
    issues,
    patch.max_instances !== undefined,
    patch.min_instances !== undefined,
  );
  await checkAlertUrlField(deps, patch.alert_webhook_url, issues);
  if (issues.length > 0) throw invalidInput(issues);
  let secrets = current.secrets;
  if (patch.secrets) {
    const [org, name] = current.agent.split('/') as [string, string];
    const agent = await findVersion(deps, org, name, current.agent_version);
    secrets = mergeSecretNames(agent?.manifest.required_secrets ?? [], patch.secrets);
  }
  if (patch.env || patch.secrets) {
    const field = patch.secrets ? 'body.secrets' : 'body.env';
    const tooLarge = checkSettingsSize(patch.env ?? current.env, secrets, field);
    if (tooLarge.length > 0) throw invalidInput(tooLarge);
  }
  if (patch.secrets) await checkSecretsExist(deps, workspaceId, secrets);
  const restartNeeded = patch.env !== undefined || patch.secrets !== undefined || patch.command !== undefined;
  const paused = current.state === 'paused';
  const changed = Object.keys(patch).join(', ');
  const result = await mutateService(
    deps,
    id,
    (s) => ({
      ...s,
      ...(patch.env !== undefined ? { env: patch.env } : {}),
      ...(patch.secrets !== undefined ? { extra_secrets: [...new Set(patch.secrets)].sort(), secrets } : {}),
      ...(patch.command !== undefined ? { command: patch.command } : {}),
      min_instances: min,
      max_instances: max,
      ...(patch.auto_update !== undefined ? { auto_update: patch.auto_update } : {}),
      ...(patch.alert_webhook_url !== undefined ? { alert_webhook_url: patch.alert_webhook_url } : {}),
      ...(patch.max_restart_failures !== undefined
        ? { max_restart_failures: patch.max_restart_failures }
        : {}),
      ...(restartNeeded && !paused
        ? {
            state: 'provisioning' as const,
            health_status: 'starting' as const,
            last_restart_at: deps.clock.now().toISOString(),
          }
        : {}),
      updated_at: deps.clock.now().toISOString(),
    }),
    {
      events: [
        {
          type: 'config_updated',
          message: `Updated ${changed}${restartNeeded ? (paused ? '; applies when the service is restarted' : '; restarting') : ''}`,
        },
      ],
    },
  );
  if (restartNeeded && !paused) await startOrRecord(deps, id);
  return result ? loadService(deps, id) : current;
}

/**
 * POST .../restart: the same version (never a newer one), with secrets and the bundle fetched
 * afresh; resumes a paused service and clears the crash-loop state.
 */
export async function restartService(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<Service> {
  await loadInWorkspace(deps, auth, workspaceId, id, 'owner');
  const now = deps.clock.now().toISOString();
  await mutateService(
    deps,
    id,
    (s) => ({
      ...s,
      state: 'provisioning',
      paused_reason: null,
      crash_loop: false,
      health_status: 'starting',
      consecutive_restart_failures: 0,
      crash_warning_sent: false,
      last_restart_at: now,
      updated_at: now,
    }),
    { events: [{ type: 'restarted', message: 'Restarted by an owner (same version)' }] },
  );
  await startOrRecord(deps, id);
  return loadService(deps, id);
}

/** DELETE: stops it, removes the record, frees the name and the account's service slot. */
export async function deleteService(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
): Promise<void> {
  const stored = await loadInWorkspace(deps, auth, workspaceId, id, 'owner');
  const s = stored.service;
  await deps.serviceRunner.stop(id, { remove: true });
  await deps.store.transactWrite([
    { delete: serviceKeys.service(id), condition: cond.exists() },
    { delete: serviceKeys.name(workspaceId, s.name) },
    {
      update: serviceKeys.counter(s.created_by),
      spec: { add: { count: -1 } },
      condition: cond.gt('count', 0),
    },
    { put: serviceEventItem(deps, id, 'stopped', 'Deleted') },
  ]);
}

/**
 * GET .../logs: newest first, one shape with agent logs (core/logs). A runner that keeps the lines
 * itself (AWS: CloudWatch Logs) is read through the port; locally the supervision hooks stored them.
 */
export async function serviceLogs(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  query: LogsQuery,
) {
  await loadInWorkspace(deps, auth, workspaceId, id, 'member');
  const runnerLogs = deps.serviceRunner.logs?.bind(deps.serviceRunner);
  const read: LogReader = runnerLogs
    ? async (range) => (await runnerLogs(id, range)).reverse().map(serviceLogLine)
    : storeLogReader(deps.store, serviceEventKeys.logs(id), (i) =>
        serviceLogLine({ at: String(i.at), level: asLogLevel(i.level), message: String(i.message) }),
      );
  return readLogPage(read, query);
}

function serviceLogLine(l: ServiceLogLine): LogLine {
  return { timestamp: l.at, level: l.level, message: l.message, request_id: null };
}
