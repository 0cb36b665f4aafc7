import type { CoreDeps } from '../../ports/core-deps.ts';
import { type ReadOptions, SHARED } from '../../ports/store.ts';
import { agentKeys } from './agent-keys.ts';
import { type AgentVersion, fromItem, parseVersion, statusOf, versionString } from './agent-record.ts';

/*
 * Registry reads, kept free of the validation libraries (ajv, yaml) so that handlers which only
 * read (the public directory, and later the calls) stay small.
 */

/** org/skill (the newest live version) or org/skill@vN, of type skill. */
export async function resolveSkillRef(deps: CoreDeps, ref: string): Promise<AgentVersion | undefined> {
  const m = /^([a-z0-9-]+)\/([a-z0-9-]+)(?:@(v\d+))?$/.exec(ref);
  if (!m) return undefined;
  const [, org = '', name = '', version] = m;
  const found = version ? await findVersion(deps, org, name, version) : await findLatest(deps, org, name);
  return found && !found.deleted_at && found.manifest.type === 'skill' ? found : undefined;
}

/**
 * The version `org/name/version`. `read` shared: the caller never changes the version it is given
 * (its manifest is then the frozen object every such reader shares: ports/store.ts, ReadOptions).
 */
export async function findVersion(
  deps: CoreDeps,
  org: string,
  name: string,
  version: string,
  read?: ReadOptions,
): Promise<AgentVersion | undefined> {
  const n = parseVersion(version);
  if (n === undefined) return undefined;
  // Only its agent id is read: shared whoever asks.
  const ref = await deps.store.get(agentKeys.versionRef(org, name, n), SHARED);
  if (!ref) return undefined;
  const item = await deps.store.get(agentKeys.version(String(ref.agent_id)), read);
  return item ? fromItem(item) : undefined;
}

/** The newest version that is not deleted. */
export async function findLatest(
  deps: CoreDeps,
  org: string,
  name: string,
): Promise<AgentVersion | undefined> {
  const head = await deps.store.get(agentKeys.head(org, name));
  if (!head) return undefined;
  for (let n = Number(head.latest_number); n >= 1; n--) {
    const found = await findVersion(deps, org, name, versionString(n));
    if (found && !found.deleted_at) return found;
  }
  return undefined;
}

/** The newest version of the agent after `agent` that still answers calls, if any. */
export async function newestCallableAfter(
  deps: CoreDeps,
  agent: AgentVersion,
): Promise<AgentVersion | undefined> {
  const head = await deps.store.get(agentKeys.head(agent.org, agent.name));
  const now = deps.clock.now();
  for (let n = Number(head?.latest_number ?? 0); n > agent.version_number; n--) {
    const found = await findVersion(deps, agent.org, agent.name, versionString(n));
    if (found && isCallable(found, now)) return found;
  }
  return undefined;
}

export function isCallable(agent: AgentVersion, now: Date): boolean {
  const status = statusOf(agent, now);
  return status === 'active' || status === 'deprecated';
}
