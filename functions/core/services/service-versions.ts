// Moving services to another version of their agent: POST .../update, and following a new publish
// (auto_update).

import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import { findLatest } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { resolveAgentRef } from '../agents/agent-ref.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { checkDeployable } from './service-deploy-checks.ts';
import { mergeSecretNames } from './service-env.ts';
import { serviceEventItem } from './service-events.ts';
import { fromServiceItem, type Service, serviceKeys } from './service-record.ts';
import type { ServiceUpdateInput } from './service-schemas.ts';
import { mutateService } from './service-supervision.ts';
import { loadInWorkspace, loadService, startOrRecord } from './services.ts';

/**
 * POST .../update: pulls a newly published version in (the newest, or `version`) and restarts a
 * running service on it. An explicit version turns auto_update off.
 */
export async function updateServiceVersion(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  input: ServiceUpdateInput,
): Promise<Service> {
  const stored = await loadInWorkspace(deps, auth, workspaceId, id, 'owner');
  const ref = `${stored.service.agent}${input.version ? `@${input.version}` : ''}`;
  const { agent } = await resolveAgentRef(
    deps,
    ref,
    workspaceId,
    auth.accountId,
    input.version ? 'body.version' : 'body.agent',
  );
  checkDeployable(agent, ref);
  const moved = await moveToVersion(deps, id, agent, input.version ? { autoUpdate: false } : {});
  return moved ?? stored.service;
}

/** Moves a service to `agent`'s version (secrets recomputed), restarting it unless paused. */
async function moveToVersion(
  deps: CoreDeps,
  id: string,
  agent: AgentVersion,
  options: { autoUpdate?: boolean },
) {
  const secretsOf = (s: Service) => mergeSecretNames(agent.manifest.required_secrets, s.extra_secrets);
  const result = await mutateService(deps, id, (s) =>
    s.agent_version === agent.version && options.autoUpdate === undefined
      ? undefined
      : {
          ...s,
          agent_version: agent.version,
          secrets: secretsOf(s),
          ...(options.autoUpdate !== undefined ? { auto_update: options.autoUpdate } : {}),
          ...(s.state === 'paused'
            ? {}
            : { state: 'provisioning' as const, health_status: 'starting' as const }),
          updated_at: deps.clock.now().toISOString(),
        },
  );
  if (!result) return undefined;
  if (result.before.agent_version !== result.after.agent_version) {
    await deps.store.put(
      serviceEventItem(
        deps,
        id,
        'version_updated',
        `Version updated from ${result.before.agent_version} to ${agent.version}`,
      ),
    );
  }
  if (result.after.state !== 'paused') await startOrRecord(deps, id);
  return loadService(deps, id);
}

/** After a publish: services of that agent in the publishing workspace with auto_update move to it. */
export async function followNewVersionServices(deps: CoreDeps, agent: AgentVersion): Promise<string[]> {
  const moved: string[] = [];
  try {
    const items = await queryAll(deps.store, {
      index: 'gsi1',
      pk: serviceKeys.ofWorkspace(agent.workspace_id),
    });
    for (const item of items) {
      const s = fromServiceItem(item).service;
      if (s.agent !== `${agent.org}/${agent.name}` || !s.auto_update) continue;
      if (Number(s.agent_version.slice(1)) >= agent.version_number) continue;
      // Never to a version older than the newest (an upload to an old version moves nothing).
      const latest = await findLatest(deps, agent.org, agent.name);
      if (latest && latest.version_number > agent.version_number) continue;
      // Only a version that can run: with code, and a runtime command or a loop.
      if (!agent.bundle || (!agent.manifest.runtime?.command && !agent.manifest.loop)) continue;
      try {
        if (await moveToVersion(deps, s.id, agent, {})) moved.push(s.id);
      } catch (err) {
        deps.logger.error('service not moved to the new version', { service_id: s.id, error: String(err) });
      }
    }
  } catch (err) {
    deps.logger.error('services not moved to the new version', { agent: agent.name, error: String(err) });
  }
  return moved;
}
