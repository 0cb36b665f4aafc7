import { bundleKey } from '../../ports/bundle-store.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond } from '../../ports/store.ts';
import { type FieldIssue, invalidInput, notFound, PlatformError } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { followNewVersionServices } from '../services/service-versions.ts';
import { agentKeys } from './agent-keys.ts';
import { type AgentVersion, fromItem, toItem, toRecord } from './agent-record.ts';
import { loadAgent, refreshHead } from './agents.ts';
import { type Manifest, parseManifest } from './manifest.ts';
import { isPaid } from './pricing.ts';
import { checkReferences, ownedWorkspace, parsePublishBody, publishVersion } from './publish.ts';
import { checkSandboxSize } from './sandbox-size.ts';
import { requireVisible } from './visibility.ts';

/*
 * The author-facing writes. They carry the manifest validators (ajv, yaml) and the archive
 * readers, so they live apart from the read paths (and run in their own Lambda).
 */

/** POST /agents: publishes the next version of the manifest's agent into a workspace the caller owns. */
export async function publishAgent(
  deps: CoreDeps,
  auth: AuthContext,
  body: unknown,
  options: { workspaceId?: string | undefined; allowNoSecrets: boolean },
) {
  const workspace = await ownedWorkspace(deps, auth, options.workspaceId);
  const { manifest, warnings, skillFiles } = await parsePublishBody(body, options);
  checkSandboxSize(manifest, auth.tier);
  await checkReferences(deps, workspace, manifest);
  const agent = await publishVersion(deps, { workspace, manifest, skillFiles, publishedBy: auth.accountId });
  return toRecord(agent, deps.clock.now(), warnings);
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
  // A version's sandbox size is its warm runners' too (docs/sandbox-aws.md, "Sizes").
  'sandbox',
] as const;

/**
 * PATCH /agents/{id}: changes the mutable manifest fields of this version. The merged manifest is
 * validated as a whole, so a patch cannot produce a manifest that publishing would refuse.
 */
export async function patchAgent(
  deps: CoreDeps,
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
  const parsed = parseManifest(merged, {
    allowNoSecrets: agent.manifest.required_secrets.length === 0,
    sent: new Set(Object.keys(patch)),
  });
  if (!parsed.ok) throw invalidInput(parsed.issues.map((i) => ({ ...i, field: `body.${i.field}` })));
  await checkReferences(deps, { id: agent.workspace_id, slug: agent.org }, parsed.manifest);
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
  deps: CoreDeps,
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
  // The archive readers (tar, yauzl: about 115 KB bundled) only for this route: publish, patch and
  // fork, served by the same Lambda, do not read them at cold start.
  const { inspectBundle } = await import('../../shared/bundle-archive/inspect.ts');
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
  // A version becomes runnable as a service once it has code: services following the agent move now.
  await followNewVersionServices(deps, next);
  return toRecord(next, now);
}

/**
 * POST /agents/{id}/fork: copies a public, source-available agent (manifest and bundle) as v1 of a
 * new agent in a workspace the caller owns. The source goes through the visibility check (another
 * workspace's private agent: 403), and the copy's references through the publish checks for its
 * new workspace. The copy is private unless the forker asks for `is_public: true`.
 */
export async function forkAgent(
  deps: CoreDeps,
  auth: AuthContext,
  agentId: string,
  input: {
    workspace_id?: string | undefined;
    new_name?: string | undefined;
    is_public?: boolean | undefined;
  },
) {
  const item = await deps.store.get(agentKeys.version(agentId));
  const source = item ? fromItem(item) : undefined;
  if (!source || source.deleted_at) throw notFound('Agent');
  const ref = `${source.org}/${source.name}/${source.version}`;
  await requireVisible(deps, source, { accountId: auth.accountId }, { ref });
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
  const isPublic = input.is_public ?? false;
  const orchestration = source.manifest.manifest;
  const parsed = parseManifest(
    {
      ...source.manifest,
      name,
      is_public: isPublic,
      ...(orchestration?.visibility !== undefined
        ? { manifest: { ...orchestration, visibility: isPublic ? 'public' : 'private' } }
        : {}),
    },
    { allowNoSecrets: source.manifest.required_secrets.length === 0 },
  );
  if (!parsed.ok) throw invalidInput(parsed.issues.map((i) => ({ ...i, field: `body.${i.field}` })));
  checkSandboxSize(parsed.manifest, auth.tier);
  await checkReferences(deps, workspace, parsed.manifest);
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
