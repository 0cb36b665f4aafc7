// What a deploy or patch checks before it writes: the agent can run as a service here, its code may
// run in this workspace, its secrets exist, and the instance counts fit the tier.

import type { CoreDeps } from '../../ports/core-deps.ts';
import { type FieldIssue, invalidInput, PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { secretKeys } from '../secrets/secret-record.ts';

/** An agent that can run as a service: a tool or agent type with runtime.command or a loop, and a bundle. */
export function checkDeployable(agent: AgentVersion, ref: string): void {
  const m = agent.manifest;
  if (m.type === 'prompt' || m.type === 'skill' || m.execution_engine === 'direct_llm') {
    throw invalidInput([
      {
        field: 'body.agent',
        message: `${ref} is a ${m.type} agent: only tool and agent types with code run as services`,
      },
    ]);
  }
  if (!m.runtime?.command && !m.loop) {
    throw invalidInput([
      { field: 'body.agent', message: `${ref} has neither runtime.command nor loop: nothing to run` },
    ]);
  }
  if (!agent.bundle) {
    throw invalidInput([
      { field: 'body.agent', message: `${ref} has no published code bundle: upload one first` },
    ]);
  }
}

/** The secrets must exist in the workspace vault: checked on their listing records (no value is read). */
/**
 * A service runs the agent's code in the deploying workspace, whose owner controls its command and
 * reads its logs: an agent of another workspace qualifies only when its author lets its code be
 * downloaded anyway (allow_local_download) and it is not paid (docs/services.md).
 */
export function checkCodeMayLeave(agent: AgentVersion, workspaceId: string, ref: string): void {
  if (agent.workspace_id === workspaceId) return;
  if (agent.manifest.allow_local_download === true && !(agent.manifest.price_credits > 0)) return;
  throw new PlatformError(
    'FORBIDDEN',
    `${ref} belongs to another workspace and its code is not downloadable (allow_local_download false, or a paid agent); deploy it from its own workspace, or call it instead`,
  );
}

export async function checkSecretsExist(deps: CoreDeps, workspaceId: string, names: string[]): Promise<void> {
  const found = await Promise.all(names.map((n) => deps.store.get(secretKeys.secret(workspaceId, n))));
  const missing = names.filter((_, i) => !found[i]);
  if (missing.length > 0) {
    throw new PlatformError(
      'MISSING_SECRETS',
      `Put these secrets in the workspace vault first: ${missing.join(', ')}`,
      {
        missing,
      },
    );
  }
}

/**
 * min ≤ max ≤ the tier's cap. `maxSent`: whether the request set max_instances; when it did not,
 * max follows min, and a cap exceeded is reported on min_instances, the field that was sent.
 * `minSent`: whether it set min_instances; a PATCH of max_instances alone below the service's
 * min_instances is reported on max_instances, the field that was sent.
 */
export function checkInstances(
  auth: AuthContext,
  min: number,
  max: number,
  issues: FieldIssue[],
  maxSent: boolean,
  minSent = true,
): void {
  const cap = TIER_LIMITS[auth.tier].instancesPerService;
  if (min > max) {
    issues.push(
      minSent
        ? { field: 'body.min_instances', message: `must not exceed max_instances (${max})` }
        : { field: 'body.max_instances', message: `must be at least min_instances (${min})` },
    );
  }
  if (max > cap)
    issues.push({
      field: maxSent ? 'body.max_instances' : 'body.min_instances',
      message: `the ${auth.tier} plan allows up to ${cap} instances per service`,
    });
}
