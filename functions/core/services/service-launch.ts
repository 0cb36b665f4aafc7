import type { CoreDeps } from '../../ports/core-deps.ts';
import { SERVICE_BUNDLE_URL_SECONDS, type ServiceLaunch } from '../../ports/service-runner.ts';
import { queryAll } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import { findVersion } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { tracedServiceStart } from '../traces/service-spans.ts';
import { loadStoredService, type Service, type StoredService, serviceKeys } from './service-record.ts';
import { mutateService } from './service-supervision.ts';

/*
 * Starting a service's instances: what a start needs (its bundle, secrets and command), the launch
 * itself with its time stored first, a failed start recorded on the service, and the start again
 * of every service after the local platform restarts. Deploys, restarts and changes
 * (services.ts), a new version (service-versions.ts) and the pause's race on AWS
 * (jobs/service-events.ts) all start through here.
 */

/**
 * The service's entrypoint, where one is named: the deploy-time override, then the manifest's
 * run_command, then, for an always-on agent, its runtime.command (the command it was published to
 * run as); null leaves it to the bundle scan (detectEntrypoint). An on-demand tool's
 * runtime.command reads one input and exits, so it is no service entrypoint.
 */
function serviceCommand(s: Service, agent: AgentVersion): string | null {
  const m = agent.manifest;
  return s.command ?? m.run_command ?? (m.run_mode === 'always_on' ? (m.runtime?.command ?? null) : null);
}

/**
 * What a start needs: the version's bundle, the secrets (required_secrets and the extra names,
 * recomputed on every start, so a rotated value or a changed list takes effect), the plain
 * variables, and the command (serviceCommand).
 */
export async function buildLaunch(deps: CoreDeps, s: Service): Promise<ServiceLaunch> {
  const [org, name] = s.agent.split('/') as [string, string];
  const agent = await findVersion(deps, org, name, s.agent_version);
  if (!agent || agent.deleted_at)
    throw new PlatformError('NOT_FOUND', `${s.agent}@${s.agent_version} no longer exists`);
  if (!agent.bundle)
    throw new PlatformError('INVALID_INPUT', `${s.agent}@${s.agent_version} has no code bundle`);
  const names = [...new Set([...agent.manifest.required_secrets, ...s.extra_secrets])].sort();
  const base = {
    serviceId: s.id,
    name: s.name,
    workspaceId: s.workspace_id,
    command: serviceCommand(s, agent),
    secretNames: names,
    http: s.http,
    instances: { min: s.min_instances, max: s.max_instances },
  };
  const platformEnv = {
    PLATFORM_SERVICE_ID: s.id,
    PLATFORM_AGENT: `${agent.org}/${agent.name}/${agent.version}`,
  };
  if (deps.serviceRunner.fetchesBundle) {
    // The task downloads the bundle itself (a signed URL, fresh on every start) and gets its
    // secrets by reference: no value passes through here.
    return {
      ...base,
      bundle: { data: Buffer.alloc(0), format: agent.bundle.format },
      bundleUrl: await deps.bundles.downloadUrl(agent.bundle.key, SERVICE_BUNDLE_URL_SECONDS),
      env: { ...s.env, ...platformEnv },
      secrets: {},
    };
  }
  const data = await deps.bundles.get(agent.bundle.key);
  if (!data) throw new Error(`Bundle ${agent.bundle.key} is missing from the store`);
  const values = await deps.vault.resolve(s.workspace_id, names);
  const missing = names.filter((n) => !(n in values));
  if (missing.length > 0) {
    throw new PlatformError(
      'MISSING_SECRETS',
      `The service needs these secrets in the workspace vault: ${missing.join(', ')}`,
      {
        missing,
      },
    );
  }
  return {
    ...base,
    bundle: { data, format: agent.bundle.format },
    env: { ...s.env, ...values, ...platformEnv },
    secrets: values,
  };
}

/**
 * Starts (or replaces) the service's instances and stores the URL and port the runner answers.
 * The launch's time is stored first, so that every task the runner creates for it is newer.
 */
export async function launchService(
  deps: CoreDeps,
  stored: StoredService,
  what: 'start' | 'resume' = 'start',
): Promise<void> {
  const s = stored.service;
  const attributes = {
    'agenthost.service.id': s.id,
    'agenthost.agent': `${s.agent}/${s.agent_version}`,
    'agenthost.workspace.id': s.workspace_id,
  };
  await tracedServiceStart(deps, what, attributes, async () => {
    const launch = await buildLaunch(deps, s);
    const launched = await mutateService(deps, s.id, (r) => r, {
      launchedAt: deps.clock.now().toISOString(),
    });
    // The record is gone (deleted meanwhile): nothing is started for it.
    if (!launched) return;
    const started = await deps.serviceRunner.start(launch, stored.port ? { preferredPort: stored.port } : {});
    await mutateService(deps, s.id, (r) => ({ ...r, url: started.url }), { port: started.port });
  });
}

/**
 * A start that failed, recorded on the service (last_error, unhealthy) and logged when it is not
 * the platform's own error; returns what the record says.
 */
export async function recordStartFailure(deps: CoreDeps, id: string, err: unknown): Promise<string> {
  const message = err instanceof PlatformError ? err.message : 'the runner could not start it';
  await mutateService(deps, id, (s) => ({ ...s, last_error: message, health_status: 'unhealthy' }));
  if (!(err instanceof PlatformError))
    deps.logger.error('service start failed', { service_id: id, error: String(err) });
  return message;
}

/** After a restart of the local platform: start again every service that was not paused. */
export async function resumeServices(deps: CoreDeps): Promise<number> {
  const items = await queryAll(deps.store, { index: 'gsi2', pk: serviceKeys.active });
  let resumed = 0;
  for (const item of items) {
    const stored = await loadStoredService(deps, String(item.id));
    if (!stored || stored.service.state === 'paused') continue;
    try {
      await launchService(deps, stored, 'resume');
      resumed++;
    } catch (err) {
      deps.logger.error('service not resumed', {
        service_id: stored.service.id,
        error: redactSecrets(String(err), {}),
      });
    }
  }
  return resumed;
}
