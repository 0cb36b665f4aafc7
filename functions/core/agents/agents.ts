import type { Deps } from '../../platform/deps.ts';
import { type FieldIssue, invalidInput, notFound, PlatformError } from '../../platform/errors.ts';
import { bundleKey } from '../../ports/bundle-store.ts';
import { cond, type Item, queryAll } from '../../ports/store.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { keys } from '../keys.ts';
import { type Role, requireMembership } from '../workspaces/authorize.ts';
import { type AgentVersion, DELETION_RETENTION_DAYS, fromItem, toItem, toRecord } from './agent-record.ts';
import { inspectBundle } from './bundle-archive.ts';
import { isPaid, type Manifest, parseManifest } from './manifest.ts';
import {
  headItem as buildHead,
  checkReferences,
  findLatest,
  ownedWorkspace,
  parsePublishBody,
  publishVersion,
} from './publish.ts';

const DAY_SECONDS = 86_400;

/** POST /agents: publishes the next version of the manifest's agent into a workspace the caller owns. */
export async function publishAgent(
  deps: Deps,
  auth: AuthContext,
  body: unknown,
  options: { workspaceId?: string | undefined; allowNoSecrets: boolean },
) {
  const workspace = await ownedWorkspace(deps, auth, options.workspaceId);
  const { manifest, warnings, skillFiles } = parsePublishBody(body, options);
  await checkReferences(deps, workspace.slug, manifest);
  const agent = await publishVersion(deps, { workspace, manifest, skillFiles, publishedBy: auth.accountId });
  return toRecord(agent, deps.clock.now(), warnings);
}

/** An agent version the caller may see (a member of its workspace), with the caller's role. Else 404. */
async function loadAgent(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  needed: Role,
): Promise<AgentVersion> {
  const item = await deps.store.get(keys.agentVersion(agentId));
  const agent = item ? fromItem(item) : undefined;
  if (!agent || agent.deleted_at) throw notFound('Agent');
  await requireMembership(deps, auth.accountId, agent.workspace_id, 'member').catch((err: unknown) => {
    throw err instanceof PlatformError && err.code === 'NOT_FOUND' ? notFound('Agent') : err;
  });
  if (needed === 'owner') await requireMembership(deps, auth.accountId, agent.workspace_id, 'owner');
  return agent;
}

export async function getAgent(deps: Deps, auth: AuthContext, agentId: string) {
  return toRecord(await loadAgent(deps, auth, agentId, 'member'), deps.clock.now());
}

/** Every live version of the agents in the caller's workspaces (or one workspace), by name then version. */
export async function listAgents(
  deps: Deps,
  auth: AuthContext,
  query: { workspace_id?: string | undefined; name?: string | undefined; limit: number; offset: number },
) {
  const workspaceIds = query.workspace_id
    ? [(await requireMembership(deps, auth.accountId, query.workspace_id, 'member')).workspaceId]
    : (await queryAll(deps.store, { index: 'gsi1', pk: keys.membershipsOfAccount(auth.accountId) })).map(
        (m) => String(m.workspace_id),
      );
  const now = deps.clock.now();
  const all: AgentVersion[] = [];
  for (const ws of workspaceIds) {
    const items = await queryAll(deps.store, {
      index: 'gsi1',
      pk: keys.agentsOfWorkspace(ws),
      ...(query.name ? { sk: { beginsWith: `${query.name}#` } } : {}),
    });
    all.push(...items.map(fromItem).filter((a) => !a.deleted_at));
  }
  all.sort(
    (a, b) =>
      a.org.localeCompare(b.org) || a.name.localeCompare(b.name) || b.version_number - a.version_number,
  );
  return {
    agents: all.slice(query.offset, query.offset + query.limit).map((a) => toRecord(a, now)),
    total: all.length,
  };
}

/** Fields that belong to a version: changing them means publishing a new version (spec "Versioning"). */
const IMMUTABLE_FIELDS = [
  'name',
  'type',
  'run_mode',
  'runtime',
  'loop',
  'callable',
  'skills_locked',
] as const;

/**
 * PATCH /agents/{id}: changes the mutable manifest fields of this version. The merged manifest is
 * validated as a whole, so a patch cannot produce a manifest that publishing would refuse.
 */
export async function patchAgent(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  patch: Record<string, unknown>,
) {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const issues: FieldIssue[] = [];
  for (const field of IMMUTABLE_FIELDS) {
    if (
      field in patch &&
      JSON.stringify(patch[field]) !== JSON.stringify(agent.manifest[field as keyof Manifest])
    ) {
      issues.push({
        field: `body.${field}`,
        message: 'cannot be changed by an update; publish a new version instead',
      });
    }
  }
  if (
    agent.manifest.skills_locked &&
    'default_skills' in patch &&
    JSON.stringify(patch.default_skills) !== JSON.stringify(agent.manifest.default_skills)
  ) {
    issues.push({
      field: 'body.default_skills',
      message: 'is locked (skills_locked); publish a new version instead',
    });
  }
  if (agent.manifest.type === 'skill') {
    issues.push({ field: 'body', message: 'a skill is changed by publishing a new version of its SKILL.md' });
  }
  if (issues.length > 0) throw invalidInput(issues);
  const merged = { ...agent.manifest, ...patch };
  const parsed = parseManifest(merged, { allowNoSecrets: agent.manifest.required_secrets.length === 0 });
  if (!parsed.ok) throw invalidInput(parsed.issues.map((i) => ({ ...i, field: `body.${i.field}` })));
  await checkReferences(deps, agent.org, parsed.manifest);
  const now = deps.clock.now();
  const next: AgentVersion = { ...agent, manifest: parsed.manifest, updated_at: now.toISOString() };
  await deps.store.put(toItem(next), { condition: cond.eq('updated_at', agent.updated_at) }).catch(() => {
    throw new PlatformError('CONFLICT', 'The agent changed meanwhile; fetch it and try again');
  });
  await refreshHead(deps, next.org, next.name);
  return toRecord(next, now, parsed.warnings);
}

/**
 * POST /agents/{id}/upload: validates and stores the code bundle of this version (replacing an
 * earlier upload). Only code-runtime and managed-loop agents have bundles.
 */
export async function uploadBundle(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  body: { data: Buffer; contentType: string | undefined },
) {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const engine = agent.manifest.execution_engine;
  if (engine !== 'code_runtime' && engine !== 'managed_loop') {
    throw invalidInput([
      {
        field: 'path.id',
        message: `is a ${agent.manifest.type} agent (engine ${engine}); only code-runtime and managed-loop agents take a code bundle`,
      },
    ]);
  }
  if (body.data.length === 0)
    throw invalidInput([{ field: 'body', message: 'is empty; send the bundle bytes' }]);
  const inspected = await inspectBundle(body.data, body.contentType);
  if (!inspected.ok) {
    throw new PlatformError(
      inspected.code,
      inspected.message,
      inspected.code === 'INVALID_INPUT'
        ? { fields: [{ field: 'body', message: inspected.message }] }
        : undefined,
    );
  }
  const key = bundleKey(agent.org, agent.name, agent.version, inspected.format);
  await deps.bundles.put(key, body.data, {
    contentType: inspected.format === 'zip' ? 'application/zip' : 'application/gzip',
    sha256: inspected.sha256,
  });
  const now = deps.clock.now();
  const next: AgentVersion = {
    ...agent,
    bundle: {
      key,
      sha256: inspected.sha256,
      size_bytes: body.data.length,
      format: inspected.format,
      entries: inspected.entries,
      uploaded_at: now.toISOString(),
    },
    updated_at: now.toISOString(),
  };
  await deps.store.put(toItem(next), { condition: cond.exists() });
  if (agent.bundle && agent.bundle.key !== key) await deps.bundles.delete(agent.bundle.key);
  return toRecord(next, now);
}

/** What deleting this version (or all versions) touches: pinned dependents, schedules, services. */
export async function deleteCheck(deps: Deps, auth: AuthContext, agentId: string) {
  const agent = await loadAgent(deps, auth, agentId, 'member');
  const versions = await liveVersions(deps, agent.org, agent.name);
  const dependents = await dependentsOf(deps, [agent]);
  const allDependents = await dependentsOf(deps, versions);
  return {
    agent_id: agent.id,
    ref: `${agent.org}/${agent.name}/${agent.version}`,
    versions: versions.map((v) => v.version),
    dependents,
    schedules: [] as string[],
    services: [] as string[],
    can_delete: dependents.length === 0,
    confirmation: dependents.length === 0 ? 'none' : 'force=true',
    all_versions: {
      dependents: allDependents,
      can_delete: allDependents.length === 0,
      confirmation: allDependents.length === 0 ? 'mode=all_versions' : 'mode=all_versions&force=true',
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
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  options: { allVersions: boolean; force: boolean },
): Promise<void> {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const targets = options.allVersions ? await liveVersions(deps, agent.org, agent.name) : [agent];
  const dependents = await dependentsOf(deps, targets);
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
    await deps.store.update(
      keys.agentVersion(v.id),
      { set: { deleted_at: now.toISOString(), updated_at: now.toISOString(), ttl } },
      { condition: cond.exists() },
    );
  }
  await refreshHead(deps, agent.org, agent.name);
}

/**
 * POST /agents/{id}/fork: copies a public, source-available agent (manifest and bundle) as v1 of a
 * new agent in a workspace the caller owns.
 */
export async function forkAgent(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  input: { workspace_id?: string | undefined; new_name?: string | undefined },
) {
  const item = await deps.store.get(keys.agentVersion(agentId));
  const source = item ? fromItem(item) : undefined;
  if (!source || source.deleted_at) throw notFound('Agent');
  const member = await deps.store.get(keys.member(source.workspace_id, auth.accountId));
  if (!source.manifest.is_public && !member) throw notFound('Agent');
  if (!source.manifest.is_public) throw new PlatformError('FORBIDDEN', 'Only public agents can be forked');
  if (isPaid(source.manifest))
    throw new PlatformError('FORBIDDEN', 'Paid agents are server-only and cannot be forked');
  if (!source.manifest.allow_local_download) {
    throw new PlatformError(
      'FORBIDDEN',
      'This agent is server-only (allow_local_download is false) and cannot be forked',
    );
  }
  const workspace = await ownedWorkspace(deps, auth, input.workspace_id);
  const name = input.new_name ?? source.name;
  const parsed = parseManifest(
    { ...source.manifest, name },
    { allowNoSecrets: source.manifest.required_secrets.length === 0 },
  );
  if (!parsed.ok) throw invalidInput(parsed.issues.map((i) => ({ ...i, field: `body.${i.field}` })));
  const fork = await publishVersion(deps, {
    workspace,
    manifest: parsed.manifest,
    skillFiles: source.skill_files,
    publishedBy: auth.accountId,
    forkedFrom: `${source.org}/${source.name}/${source.version}`,
    requireFirst: true,
  });
  if (!source.bundle) return toRecord(fork, deps.clock.now());
  const data = await deps.bundles.get(source.bundle.key);
  if (!data) return toRecord(fork, deps.clock.now());
  const key = bundleKey(fork.org, fork.name, fork.version, source.bundle.format);
  await deps.bundles.put(key, data, {
    contentType: source.bundle.format === 'zip' ? 'application/zip' : 'application/gzip',
    sha256: source.bundle.sha256,
  });
  const withBundle: AgentVersion = { ...fork, bundle: { ...source.bundle, key } };
  await deps.store.put(toItem(withBundle), { condition: cond.exists() });
  return toRecord(withBundle, deps.clock.now());
}

/** GET /agents/{id}/logs: the owner's view of this version's execution log lines, newest first. */
export async function agentLogs(deps: Deps, auth: AuthContext, agentId: string, limit: number) {
  const agent = await loadAgent(deps, auth, agentId, 'owner');
  const page = await deps.store.query({
    pk: keys.agentVersion(agent.id).pk,
    sk: { beginsWith: keys.agentLogPrefix },
    reverse: true,
    limit,
  });
  return {
    logs: page.items.map((i) => ({
      timestamp: String(i.timestamp),
      level: String(i.level),
      message: String(i.message),
      request_id: (i.request_id as string | undefined) ?? null,
    })),
  };
}

async function liveVersions(deps: Deps, org: string, name: string): Promise<AgentVersion[]> {
  const refs = await queryAll(deps.store, {
    pk: keys.agentHead(org, name).pk,
    sk: { beginsWith: keys.agentVersionRefPrefix },
  });
  const out: AgentVersion[] = [];
  for (const ref of refs) {
    const item = await deps.store.get(keys.agentVersion(String(ref.agent_id)));
    if (item && !item.deleted_at) out.push(fromItem(item));
  }
  return out;
}

/** Live agent versions (outside `targets`) that pin any of `targets`, as org/name/version. */
async function dependentsOf(deps: Deps, targets: AgentVersion[]): Promise<string[]> {
  const targetIds = new Set(targets.map((t) => t.id));
  const out = new Set<string>();
  for (const t of targets) {
    const refs = await queryAll(deps.store, { pk: keys.dependentsOf(`${t.org}/${t.name}@${t.version}`) });
    for (const ref of refs) {
      if (targetIds.has(String(ref.agent_id))) continue;
      const item = await deps.store.get(keys.agentVersion(String(ref.agent_id)));
      if (item && !item.deleted_at) out.add(`${item.org}/${item.name}/${item.version}`);
    }
  }
  return [...out].sort();
}

/**
 * Re-points the head's directory entry at the newest live version (after a patch or delete). The
 * version counter is kept, so a deleted version's number is never reused.
 */
async function refreshHead(deps: Deps, org: string, name: string): Promise<void> {
  const head = await deps.store.get(keys.agentHead(org, name));
  if (!head) return;
  const latest = await findLatest(deps, org, name);
  const next: Item = latest
    ? buildHead(latest, Number(head.latest_number))
    : { ...keys.agentHead(org, name), org, name, latest_number: head.latest_number, latest_id: null };
  // latest_id keeps pointing at the newest published version (deprecation needs it).
  next.latest_id = head.latest_id ?? null;
  await deps.store
    .put(next, { condition: cond.eq('latest_number', Number(head.latest_number)) })
    .catch(() => undefined);
}
