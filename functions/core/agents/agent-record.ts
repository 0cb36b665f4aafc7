import * as z from 'zod';
import type { Item } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { agentKeys } from './agent-keys.ts';
import type { Manifest, Warning } from './manifest.ts';
import { isPaid, isSourceAvailable } from './pricing.ts';

/** Deprecated versions stay callable for this long after their successor is published (spec "Versioning"). */
export const DEPRECATION_DAYS = 60;
/** Soft-deleted versions are purged this long after deletion (spec "Limits"). */
export const DELETION_RETENTION_DAYS = 30;

export type AgentStatus = 'active' | 'deprecated' | 'sunset' | 'deleted';

const bundleInfoSchema = z.object({
  key: z.string(),
  sha256: z.string(),
  size_bytes: z.number(),
  format: z.enum(['tar.gz', 'zip']),
  entries: z.number(),
  uploaded_at: z.string(),
});

export type BundleInfo = z.output<typeof bundleInfoSchema>;

const agentVersionSchema = z.object({
  id: z.string(),
  org: z.string(),
  name: z.string(),
  version: z.string(),
  version_number: z.number(),
  workspace_id: z.string(),
  /** Validated when it was published (manifest.ts); read back as an object, not re-validated. */
  manifest: z.custom<Manifest>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'not a manifest',
  ),
  skill_files: z.record(z.string(), z.string()).nullable(),
  bundle: bundleInfoSchema.nullable(),
  published_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  deprecated_at: z.string().nullable(),
  sunset_at: z.string().nullable(),
  deleted_at: z.string().nullable(),
  forked_from: z.string().nullable(),
});

/** One published version of an agent, as stored. */
export type AgentVersion = z.output<typeof agentVersionSchema>;

/** One agent version, by its own id, indexed under its workspace by name and version. */
export const agentVersionEntity = defineEntity({
  name: 'agent version',
  keys: { version: agentKeys.version, ofWorkspace: agentKeys.ofWorkspace },
  schema: agentVersionSchema,
  locate: (agent) => ({
    ...agentKeys.version(agent.id),
    gsi1pk: agentKeys.ofWorkspace(agent.workspace_id),
    gsi1sk: `${agent.name}#${String(agent.version_number).padStart(6, '0')}`,
  }),
});

export function versionString(n: number): string {
  return `v${n}`;
}

export function parseVersion(version: string): number | undefined {
  const m = /^v([1-9][0-9]{0,5})$/.exec(version);
  return m ? Number(m[1]) : undefined;
}

export function statusOf(agent: AgentVersion, now: Date): AgentStatus {
  if (agent.deleted_at) return 'deleted';
  if (agent.sunset_at && Date.parse(agent.sunset_at) <= now.getTime()) return 'sunset';
  if (agent.deprecated_at) return 'deprecated';
  return 'active';
}

export function toItem(agent: AgentVersion): Item {
  return agentVersionEntity.toItem(agent);
}

export function fromItem(item: Item): AgentVersion {
  return agentVersionEntity.fromItem(item);
}

/**
 * The agent record the API returns: the manifest's fields at the top level (so the canonical
 * type, run_mode, execution_engine and callable are there), plus the version's own fields.
 */
export function toRecord(agent: AgentVersion, now: Date, warnings?: Warning[]) {
  return {
    ...agent.manifest,
    id: agent.id,
    org: agent.org,
    name: agent.name,
    version: agent.version,
    ref: `${agent.org}/${agent.name}/${agent.version}`,
    workspace_id: agent.workspace_id,
    status: statusOf(agent, now),
    paid: isPaid(agent.manifest),
    source_available: isSourceAvailable(agent.manifest),
    skill_files: agent.skill_files,
    bundle: agent.bundle
      ? {
          sha256: agent.bundle.sha256,
          size_bytes: agent.bundle.size_bytes,
          format: agent.bundle.format,
          entries: agent.bundle.entries,
          uploaded_at: agent.bundle.uploaded_at,
        }
      : null,
    published_by: agent.published_by,
    forked_from: agent.forked_from,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
    deprecated_at: agent.deprecated_at,
    sunset_at: agent.sunset_at,
    deleted_at: agent.deleted_at,
    ...(warnings ? { warnings } : {}),
  };
}

export type AgentRecord = ReturnType<typeof toRecord>;

/** The head of org/name: the version counter, the newest version, and the directory entry. */
export function headItem(agent: AgentVersion, latest: number): Item {
  const listed = agent.manifest.is_public && !agent.deleted_at;
  return {
    ...agentKeys.head(agent.org, agent.name),
    org: agent.org,
    name: agent.name,
    workspace_id: agent.workspace_id,
    latest_number: latest,
    latest_id: agent.id,
    type: agent.manifest.type,
    description: agent.manifest.description,
    tags: agent.manifest.tags,
    is_public: agent.manifest.is_public,
    updated_at: agent.updated_at,
    ...(listed ? { gsi2pk: agentKeys.publicDirectory, gsi2sk: `${agent.org}/${agent.name}` } : {}),
  };
}
