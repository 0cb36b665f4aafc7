import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, queryAll } from '../../ports/store.ts';
import { notFound, PlatformError } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { contentBytes } from '../calls/call-log-lines.ts';
import { readLogPage, storeLogReader } from '../logs/log-page.ts';
import { asLogLevel, type LogsQuery } from '../logs/log-schemas.ts';
import { sizedPage } from '../payloads/answer-page.ts';
import { callLineSk } from '../traces/trace-record.ts';
import { type Role, requireMembership } from '../workspaces/authorize.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import { agentKeys } from './agent-keys.ts';
import { findLatest } from './agent-lookup.ts';
import {
  type AgentVersion,
  headItem as buildHead,
  DELETION_RETENTION_DAYS,
  fromItem,
  toRecord,
} from './agent-record.ts';
import { bundlePurgeItem } from './bundle-purge.ts';

/*
 * Reading and removing agents: no manifest validation, no archives, no bucket (see authoring.ts
 * for publishing, patching, uploading and forking).
 */

const DAY_SECONDS = 86_400;

/** An agent version the caller may see (a member of its workspace), with the caller's role. Else 404. */
export async function loadAgent(
  deps: CoreDeps,
  auth: AuthContext,
  agentId: string,
  needed: Role,
): Promise<AgentVersion> {
  const item = await deps.store.get(agentKeys.version(agentId));
  const agent = item ? fromItem(item) : undefined;
  if (!agent || agent.deleted_at) throw notFound('Agent');
  await requireMembership(deps, auth.accountId, agent.workspace_id, needed, { resource: 'Agent' });
  return agent;
}

export async function getAgent(deps: CoreDeps, auth: AuthContext, agentId: string) {
  return toRecord(await loadAgent(deps, auth, agentId, 'member'), deps.clock.now());
}

/** Every live version of the agents in the caller's workspaces (or one workspace), by name then version. */
export async function listAgents(
  deps: CoreDeps,
  auth: AuthContext,
  query: { workspace_id?: string | undefined; name?: string | undefined; limit: number; offset: number },
) {
  const workspaceIds = query.workspace_id
    ? [(await requireMembership(deps, auth.accountId, query.workspace_id, 'member')).workspaceId]
    : (await queryAll(deps.store, { index: 'gsi1', pk: memberKeys.ofAccount(auth.accountId) })).map((m) =>
        String(m.workspace_id),
      );
  const now = deps.clock.now();
  const all: AgentVersion[] = [];
  for (const ws of workspaceIds) {
    const items = await queryAll(deps.store, {
      index: 'gsi1',
      pk: agentKeys.ofWorkspace(ws),
      ...(query.name ? { sk: { beginsWith: `${query.name}#` } } : {}),
    });
    all.push(...items.map(fromItem).filter((a) => !a.deleted_at));
  }
  all.sort(
    (a, b) =>
      a.org.localeCompare(b.org) || a.name.localeCompare(b.name) || b.version_number - a.version_number,
  );
  // A record carries its manifest (up to 256 KiB): pages are bounded by size too (answer-page.ts).
  const { page, next_offset } = sizedPage(
    all.slice(query.offset, query.offset + query.limit).map((a) => toRecord(a, now)),
    query.offset,
    all.length,
  );
  return { agents: page, total: all.length, next_offset };
}

/** What deleting this version (or all versions) touches: pinned dependents, schedules, services. */
export async function deleteCheck(deps: CoreDeps, auth: AuthContext, agentId: string) {
  const agent = await loadAgent(deps, auth, agentId, 'member');
  const versions = await liveVersions(deps, agent.org, agent.name);
  const dependents = await dependentsOf(deps, [agent]);
  const allDependents = await dependentsOf(deps, versions);
  const users = await runnersOf(deps, agent, [agent.version]);
  const allUsers = await runnersOf(
    deps,
    agent,
    versions.map((v) => v.version),
  );
  const blocked = dependents.length + users.schedules.length + users.services.length > 0;
  const allBlocked = allDependents.length + allUsers.schedules.length + allUsers.services.length > 0;
  return {
    agent_id: agent.id,
    ref: `${agent.org}/${agent.name}/${agent.version}`,
    versions: versions.map((v) => v.version),
    dependents,
    schedules: users.schedules,
    services: users.services,
    can_delete: !blocked,
    confirmation: blocked ? ('force=true' as const) : ('none' as const),
    all_versions: {
      dependents: allDependents,
      schedules: allUsers.schedules,
      services: allUsers.services,
      can_delete: !allBlocked,
      confirmation: allBlocked ? ('mode=all_versions&force=true' as const) : ('mode=all_versions' as const),
    },
    retention_days: DELETION_RETENTION_DAYS,
  };
}

/**
 * Soft-deletes this version (or every version with mode=all_versions): hidden from listings, the
 * directory and calls at once, purged by the store's TTL after 30 days. Versions that other agents
 * pin are deleted only with force=true (delete-check says so).
 */
export async function deleteAgent(
  deps: CoreDeps,
  auth: AuthContext,
  agentId: string,
  options: { allVersions: boolean; force: boolean },
): Promise<void> {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const targets = options.allVersions ? await liveVersions(deps, agent.org, agent.name) : [agent];
  const dependents = await dependentsOf(deps, targets);
  const users = await runnersOf(
    deps,
    agent,
    targets.map((v) => v.version),
  );
  if (users.schedules.length + users.services.length > 0 && !options.force) {
    throw new PlatformError(
      'CONFLICT',
      `Run by ${users.schedules.length} schedule(s) and ${users.services.length} service(s) of its workspace; delete with force=true, after which their runs fail`,
      { schedules: users.schedules, services: users.services },
    );
  }
  if (dependents.length > 0 && !options.force) {
    throw new PlatformError(
      'CONFLICT',
      `Pinned by ${dependents.length} other agent version(s) (${dependents.slice(0, 5).join(', ')}); delete with force=true to break them`,
      { dependents },
    );
  }
  const now = deps.clock.now();
  const ttl = Math.floor(now.getTime() / 1000) + DELETION_RETENTION_DAYS * DAY_SECONDS;
  for (const v of targets) {
    await deps.store.transactWrite([
      {
        update: agentKeys.version(v.id),
        spec: { set: { deleted_at: now.toISOString(), updated_at: now.toISOString(), ttl } },
        condition: cond.exists(),
      },
      // Its bundle goes when the record does (housekeeping, core/agents/bundle-purge.ts).
      ...(v.bundle ? [{ put: bundlePurgeItem(v.id, v.bundle.key, ttl) }] : []),
    ]);
  }
  await refreshHead(deps, agent.org, agent.name);
}

/** GET /agents/{id}/logs: the owner's view of this version's execution log lines, newest first. */
export async function agentLogs(deps: CoreDeps, auth: AuthContext, agentId: string, query: LogsQuery) {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const read = storeLogReader(deps.store, agentKeys.version(agent.id).pk, (i) => ({
    timestamp: String(i.timestamp),
    level: asLogLevel(i.level),
    message: shownMessage(i),
    request_id: (i.request_id as string | undefined) ?? null,
  }));
  return readLogPage(read, query);
}

/**
 * A stored line's message as its owners read it. A call's engine lines are written as their owners
 * may see them (whole for their own workspace's calls, else their outline: core/calls/call-report.ts)
 * and say so (`content`); one written by an earlier build may hold a stranger's output, and
 * whose call it was is not on it: only its size is shown. A call's own line (its outcome) never
 * held any: it is keyed by its request id, or, written by an earlier build, begins with it, which
 * no engine line does (they begin with the platform's words or a tool's name and its arguments).
 */
function shownMessage(item: Item): string {
  const message = String(item.message);
  if (item.content !== undefined) return message;
  const requestId = item.request_id;
  if (
    typeof requestId === 'string' &&
    (item.sk === callLineSk(String(item.timestamp), requestId) ||
      message.startsWith(`call ${requestId} succeeded in `) ||
      message.startsWith(`call ${requestId} failed with `))
  )
    return message;
  return `[${contentBytes(message)} written before a call's output was kept from other accounts, not shown]`;
}

/**
 * The schedules and services of the agent's own workspace that run one of `versions` (other
 * workspaces' schedules of a public agent are not listed: they cannot be enumerated without a scan).
 */
async function runnersOf(
  deps: CoreDeps,
  agent: AgentVersion,
  versions: string[],
): Promise<{ schedules: string[]; services: string[] }> {
  const ref = `${agent.org}/${agent.name}`;
  const [schedules, services] = await Promise.all([
    queryAll(deps.store, { index: 'gsi1', pk: `WS#${agent.workspace_id}#SCHEDULES` }),
    queryAll(deps.store, { index: 'gsi1', pk: `WS#${agent.workspace_id}#SERVICES` }),
  ]);
  const using = (items: typeof schedules) =>
    items
      .filter((i) => i.agent === ref && versions.includes(String(i.agent_version)))
      .map((i) => String(i.id));
  return { schedules: using(schedules), services: using(services) };
}

async function liveVersions(deps: CoreDeps, org: string, name: string): Promise<AgentVersion[]> {
  const refs = await queryAll(deps.store, {
    pk: agentKeys.head(org, name).pk,
    sk: { beginsWith: agentKeys.versionRefPrefix },
  });
  const out: AgentVersion[] = [];
  for (const ref of refs) {
    const item = await deps.store.get(agentKeys.version(String(ref.agent_id)));
    if (item && !item.deleted_at) out.push(fromItem(item));
  }
  return out;
}

/** Live agent versions (outside `targets`) that pin any of `targets`, as org/name/version. */
async function dependentsOf(deps: CoreDeps, targets: AgentVersion[]): Promise<string[]> {
  const targetIds = new Set(targets.map((t) => t.id));
  const out = new Set<string>();
  for (const t of targets) {
    const refs = await queryAll(deps.store, {
      pk: agentKeys.dependentsOf(`${t.org}/${t.name}@${t.version}`),
    });
    for (const ref of refs) {
      if (targetIds.has(String(ref.agent_id))) continue;
      const item = await deps.store.get(agentKeys.version(String(ref.agent_id)));
      if (item && !item.deleted_at) out.add(`${item.org}/${item.name}/${item.version}`);
    }
  }
  return [...out].sort();
}

/**
 * Re-points the head's directory entry at the newest live version (after a patch or delete). The
 * version counter is kept, so a deleted version's number is never reused.
 */
export async function refreshHead(deps: CoreDeps, org: string, name: string): Promise<void> {
  const head = await deps.store.get(agentKeys.head(org, name));
  if (!head) return;
  const latest = await findLatest(deps, org, name);
  const next: Item = latest
    ? buildHead(latest, Number(head.latest_number))
    : { ...agentKeys.head(org, name), org, name, latest_number: head.latest_number, latest_id: null };
  // latest_id keeps pointing at the newest published version (deprecation needs it).
  next.latest_id = head.latest_id ?? null;
  await deps.store
    .put(next, { condition: cond.eq('latest_number', Number(head.latest_number)) })
    .catch(() => undefined);
}
