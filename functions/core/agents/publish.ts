import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, TransactionCanceledError, type TransactOp } from '../../ports/store.ts';
import { type FieldIssue, invalidInput, PlatformError } from '../../shared/errors.ts';
import { isRecord } from '../../shared/is-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { spreadRetries, updateWithRevision } from '../revision.ts';
import { followNewVersion } from '../schedules/schedule-version-tracking.ts';
import { followNewVersionServices } from '../services/service-versions.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { workspaceEntity, workspaceKeys } from '../workspaces/workspace-record.ts';
import { agentKeys } from './agent-keys.ts';
import { findVersion, resolveSkillRef } from './agent-lookup.ts';
import { type AgentVersion, DEPRECATION_DAYS, headItem, toItem, versionString } from './agent-record.ts';
import { type Manifest, parseManifest, type Warning } from './manifest.ts';
import { requireVisible } from './visibility.ts';

const DAY_MS = 86_400_000;
const MAX_PUBLISH_ATTEMPTS = 10;

/** The workspace an agent is published into, with the slug that is its org in agent addresses. */
export async function ownedWorkspace(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string | undefined,
): Promise<{ id: string; slug: string }> {
  const id = workspaceId ?? auth.personalWorkspaceId;
  await requireMembership(deps, auth.accountId, id, 'owner');
  const ws = await deps.store.get(workspaceKeys.workspace(id));
  if (!ws) throw new PlatformError('NOT_FOUND', 'Workspace not found');
  return { id, slug: workspaceEntity.fromItem(ws).slug };
}

/**
 * Parses a publish body: an agent manifest, or `{type: "skill", skill_md: "..."}` for a skill.
 * Every rejection names the field (prefixed `body.`) and the rule. The SKILL.md reader (with
 * yaml, about 110 KB bundled) is imported only for a skill, so the publish Lambda's cold start
 * does not read it (bench/bundle-sizes.ts).
 */
export async function parsePublishBody(
  body: unknown,
  options: { allowNoSecrets: boolean },
): Promise<{ manifest: Manifest; warnings: Warning[]; skillFiles: Record<string, string> | null }> {
  let input = body;
  let skillFiles: Record<string, string> | null = null;
  if (isRecord(body) && typeof body.skill_md === 'string') {
    const extra = Object.keys(body).filter((k) => k !== 'skill_md' && k !== 'type');
    if (extra.length > 0 || (body.type !== undefined && body.type !== 'skill')) {
      throw invalidInput([
        {
          field: 'body',
          message: 'a skill is published as {"type": "skill", "skill_md": "<SKILL.md text>"} only',
        },
      ]);
    }
    const { parseSkillMd, skillToManifest } = await import('./skill-md.ts');
    const skill = parseSkillMd(body.skill_md);
    if (!skill.ok) throw invalidInput(skill.issues.map((i) => ({ ...i, field: `body.skill_md.${i.field}` })));
    input = skillToManifest(skill.skill);
    skillFiles = { 'SKILL.md': body.skill_md };
  }
  const parsed = parseManifest(input, { allowNoSecrets: options.allowNoSecrets });
  if (!parsed.ok) throw invalidInput(prefix(parsed.issues));
  return { manifest: parsed.manifest, warnings: parsed.warnings, skillFiles };
}

/**
 * Checks what the manifest references against the registry: dependencies exist (pinned, not
 * deleted) and form no cycle by agent name; default skills name existing skills. Both must be
 * visible to the workspace the agent belongs to (core/agents/visibility.ts): another workspace's
 * private agent or skill is 403, whoever publishes, because every caller of this agent would get it.
 */
export async function checkReferences(
  deps: CoreDeps,
  workspace: { id: string; slug: string },
  manifest: Manifest,
): Promise<void> {
  const org = workspace.slug;
  const viewer = { workspaceId: workspace.id };
  const issues: FieldIssue[] = [];
  const dependencies = manifest.manifest?.dependencies ?? [];
  for (const [i, dep] of dependencies.entries()) {
    const [depOrg, depName] = dep.id.split('/') as [string, string];
    const found = await findVersion(deps, depOrg, depName, dep.version);
    if (!found || found.deleted_at) {
      issues.push({
        field: `body.manifest.dependencies.${i}`,
        message: `${dep.id}@${dep.version} does not exist`,
      });
      continue;
    }
    await requireVisible(deps, found, viewer, {
      ref: `${dep.id}@${dep.version}`,
      field: `body.manifest.dependencies.${i}`,
    });
    const cycle = await findCycle(deps, `${org}/${manifest.name}`, found, [
      `${org}/${manifest.name}`,
      dep.id,
    ]);
    if (cycle) {
      issues.push({
        field: `body.manifest.dependencies.${i}`,
        message: `dependency cycle: ${cycle.join(' -> ')}`,
      });
    }
  }
  for (const [i, ref] of manifest.default_skills.entries()) {
    const skill = await resolveSkillRef(deps, ref);
    if (!skill) {
      issues.push({ field: `body.default_skills.${i}`, message: `skill ${ref} does not exist` });
      continue;
    }
    await requireVisible(deps, skill, viewer, { ref, field: `body.default_skills.${i}` });
  }
  if (issues.length > 0) throw invalidInput(issues);
}

/** Depth-first over pinned dependencies; returns the path when it comes back to `root` (by name). */
async function findCycle(
  deps: CoreDeps,
  root: string,
  at: AgentVersion,
  path: string[],
): Promise<string[] | undefined> {
  if (path.length > 32) return undefined;
  for (const dep of at.manifest.manifest?.dependencies ?? []) {
    if (dep.id === root) return [...path, dep.id];
    const [o, n] = dep.id.split('/') as [string, string];
    const next = await findVersion(deps, o, n, dep.version);
    if (next) {
      const found = await findCycle(deps, root, next, [...path, dep.id]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Publishes the next version of org/name. The version number comes from the head item, written
 * under the condition that nobody else published meanwhile, in the same transaction as the version
 * itself, its lookup entry, the deprecation of the previous version and the reverse-dependency
 * entries: two concurrent publishes get two distinct versions, and a failure writes nothing.
 */
export async function publishVersion(
  deps: CoreDeps,
  input: {
    workspace: { id: string; slug: string };
    manifest: Manifest;
    skillFiles: Record<string, string> | null;
    publishedBy: string;
    forkedFrom?: string;
    requireFirst?: boolean;
  },
): Promise<AgentVersion> {
  const { workspace, manifest } = input;
  const org = workspace.slug;
  const outcome = await updateWithRevision({
    attempts: MAX_PUBLISH_ATTEMPTS,
    // The head may be absent (a first publish): wrapped, so that absence is a state to decide on.
    load: async () => ({ head: await deps.store.get(agentKeys.head(org, manifest.name)) }),
    decide: async ({ head }) => {
      if (head && input.requireFirst) {
        throw new PlatformError('CONFLICT', `${org}/${manifest.name} exists already; choose another name`);
      }
      const previous = head ? Number(head.latest_number) : 0;
      const n = previous + 1;
      const now = deps.clock.now();
      const at = now.toISOString();
      const agent: AgentVersion = {
        id: randomUUID(),
        org,
        name: manifest.name,
        version: versionString(n),
        version_number: n,
        workspace_id: workspace.id,
        manifest,
        skill_files: input.skillFiles,
        bundle: null,
        published_by: input.publishedBy,
        created_at: at,
        updated_at: at,
        deprecated_at: null,
        sunset_at: null,
        deleted_at: null,
        forked_from: input.forkedFrom ?? null,
      };
      const ops: TransactOp[] = [
        {
          put: headItem(agent, n),
          condition: head ? cond.eq('latest_number', previous) : cond.notExists(),
        },
        {
          put: { ...agentKeys.versionRef(org, manifest.name, n), agent_id: agent.id },
          condition: cond.notExists(),
        },
        { put: toItem(agent), condition: cond.notExists() },
      ];
      // The previous newest version, unless it was deleted (and perhaps purged) meanwhile.
      const previousItem = head?.latest_id
        ? await deps.store.get(agentKeys.version(String(head.latest_id)))
        : undefined;
      if (head?.latest_id && previousItem && !previousItem.deleted_at) {
        // The previous newest version is deprecated now, callable until its sunset.
        ops.push({
          update: agentKeys.version(String(head.latest_id)),
          spec: {
            set: {
              deprecated_at: at,
              sunset_at: new Date(now.getTime() + DEPRECATION_DAYS * DAY_MS).toISOString(),
              updated_at: at,
            },
          },
          condition: cond.exists(),
        });
      }
      for (const dep of manifest.manifest?.dependencies ?? []) {
        ops.push({
          put: { ...agentKeys.dependent(`${dep.id}@${dep.version}`, agent.id), agent_id: agent.id },
        });
      }
      return { agent, ops };
    },
    write: async (_current, { ops }) => {
      await deps.store.transactWrite(ops);
    },
    // Someone else published meanwhile (the head's condition failed): take the next number.
    lostRace: (err) => err instanceof TransactionCanceledError,
    // Publishes that land together (a CI matrix publishing one agent) spread their retries out.
    backoff: spreadRetries,
  });
  if (outcome.status !== 'written') {
    throw new PlatformError('CONFLICT', 'Too many concurrent publishes of this agent; try again');
  }
  const { agent } = outcome.decision;
  await followNewVersion(deps, agent);
  await followNewVersionServices(deps, agent);
  return agent;
}

function prefix(issues: FieldIssue[]): FieldIssue[] {
  return issues.map((i) => ({ ...i, field: i.field ? `body.${i.field}` : 'body' }));
}
