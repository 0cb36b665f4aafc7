import type { Item } from '../../ports/store.ts';
import { keys } from '../keys.ts';
import type { Manifest, Warning } from './manifest.ts';
import { isPaid, isSourceAvailable } from './pricing.ts';

/** Deprecated versions stay callable for this long after their successor is published (spec "Versioning"). */
export const DEPRECATION_DAYS = 60;
/** Soft-deleted versions are purged this long after deletion (spec "Limits"). */
export const DELETION_RETENTION_DAYS = 30;

export type AgentStatus = 'active' | 'deprecated' | 'sunset' | 'deleted';

export interface BundleInfo {
  key: string;
  sha256: string;
  size_bytes: number;
  format: 'tar.gz' | 'zip';
  entries: number;
  uploaded_at: string;
}

/** One published version of an agent, as stored. */
export interface AgentVersion {
  id: string;
  org: string;
  name: string;
  version: string;
  version_number: number;
  workspace_id: string;
  manifest: Manifest;
  skill_files: Record<string, string> | null;
  bundle: BundleInfo | null;
  published_by: string;
  created_at: string;
  updated_at: string;
  deprecated_at: string | null;
  sunset_at: string | null;
  deleted_at: string | null;
  forked_from: string | null;
}

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
  return {
    ...keys.agentVersion(agent.id),
    ...(agent as unknown as Record<string, never>),
    gsi1pk: keys.agentsOfWorkspace(agent.workspace_id),
    gsi1sk: `${agent.name}#${String(agent.version_number).padStart(6, '0')}`,
  };
}

export function fromItem(item: Item): AgentVersion {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ttl: _ttl, ...rest } = item;
  return rest as unknown as AgentVersion;
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
    ...keys.agentHead(agent.org, agent.name),
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
    ...(listed ? { gsi2pk: keys.publicAgents, gsi2sk: `${agent.org}/${agent.name}` } : {}),
  };
}
