import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import { notFound, PlatformError } from '../../shared/errors.ts';
import { agentKeys } from './agent-keys.ts';
import { findLatest, findVersion, isCallable } from './agent-lookup.ts';
import type { AgentVersion } from './agent-record.ts';
import { isPaid, isSourceAvailable } from './pricing.ts';

/** How long a directory download's bundle URL stays valid. */
export const DOWNLOAD_URL_TTL_SECONDS = 15 * 60;

/** GET /public/agents: the newest live public version of each public agent, filtered, paged. */
export async function listPublicAgents(
  deps: CoreDeps,
  query: {
    q?: string | undefined;
    tag?: string | undefined;
    type?: string | undefined;
    limit: number;
    offset: number;
  },
) {
  const heads = await queryAll(deps.store, { index: 'gsi2', pk: agentKeys.publicDirectory });
  const now = deps.clock.now();
  const text = query.q?.toLowerCase();
  const listed: AgentVersion[] = [];
  for (const head of heads) {
    if (query.type && head.type !== query.type) continue;
    if (query.tag && !(Array.isArray(head.tags) && head.tags.includes(query.tag))) continue;
    const latest = await findLatest(deps, String(head.org), String(head.name));
    if (!latest?.manifest.is_public || !isCallable(latest, now)) continue;
    // Matched on the version listed, so the description searched is the one shown.
    if (text && !matches(latest, text)) continue;
    listed.push(latest);
  }
  return {
    agents: listed.slice(query.offset, query.offset + query.limit).map(summary),
    total: listed.length,
  };
}

/** A version the public may see: public, not deleted, not past its sunset. */
async function publicVersion(
  deps: CoreDeps,
  org: string,
  name: string,
  version: string,
): Promise<AgentVersion> {
  const agent = await findVersion(deps, org, name, version);
  if (!agent || !agent.manifest.is_public || !isCallable(agent, deps.clock.now())) {
    throw notFound(`Agent ${org}/${name}/${version}`);
  }
  return agent;
}

/**
 * GET /public/agents/{org}/{agent}/{version}: details. For server-only and paid agents the prompt,
 * the manifest and the skill files are left out; name, description, schemas and tags stay.
 */
export async function publicAgentDetails(deps: CoreDeps, org: string, name: string, version: string) {
  const agent = await publicVersion(deps, org, name, version);
  const open = isSourceAvailable(agent.manifest);
  return {
    ...summary(agent),
    input_schema: agent.manifest.input_schema ?? null,
    output_schema: agent.manifest.output_schema ?? null,
    supported_providers: agent.manifest.supported_providers,
    default_endpoint: agent.manifest.default_endpoint,
    deprecated_at: agent.deprecated_at,
    sunset_at: agent.sunset_at,
    ...(open
      ? {
          prompt_template: agent.manifest.prompt_template ?? null,
          manifest: agent.manifest,
          skill_files: agent.skill_files,
        }
      : {}),
  };
}

/**
 * GET /public/agents/{org}/{agent}/{version}/download: everything needed to run the agent
 * locally, for source-available agents only, with a short-lived bundle URL when it has a bundle.
 */
export async function downloadPublicAgent(deps: CoreDeps, org: string, name: string, version: string) {
  const agent = await publicVersion(deps, org, name, version);
  if (isPaid(agent.manifest)) {
    throw new PlatformError(
      'PAID_AGENT_SERVER_ONLY',
      `${org}/${name} is a paid agent: it runs on the platform only`,
    );
  }
  if (!agent.manifest.allow_local_download) {
    throw new PlatformError(
      'DOWNLOAD_DISABLED',
      `${org}/${name} is server-only: its author has not enabled downloads`,
    );
  }
  const m = agent.manifest;
  return {
    type: m.type,
    name: agent.name,
    org: agent.org,
    version: agent.version,
    description: m.description,
    run_mode: m.run_mode,
    execution_engine: m.execution_engine,
    callable: m.callable,
    source_url: m.source_url ?? null,
    runtime: m.runtime ?? null,
    prompt_template: m.prompt_template ?? null,
    input_schema: m.input_schema ?? null,
    output_schema: m.output_schema ?? null,
    manifest: m,
    skill_files: agent.skill_files,
    bundle: agent.bundle
      ? {
          url: await deps.bundles.downloadUrl(agent.bundle.key, DOWNLOAD_URL_TTL_SECONDS),
          expires_in: DOWNLOAD_URL_TTL_SECONDS,
          sha256: agent.bundle.sha256,
          format: agent.bundle.format,
          size_bytes: agent.bundle.size_bytes,
        }
      : null,
  };
}

/** Whether `text` (lower case) is in the agent's org/name or its description. */
function matches(agent: AgentVersion, text: string): boolean {
  return (
    `${agent.org}/${agent.name}`.toLowerCase().includes(text) ||
    agent.manifest.description.toLowerCase().includes(text)
  );
}

function summary(agent: AgentVersion) {
  return {
    // The version's id: forking a public agent (POST /agents/{id}/fork) needs it.
    id: agent.id,
    org: agent.org,
    name: agent.name,
    version: agent.version,
    ref: `${agent.org}/${agent.name}/${agent.version}`,
    type: agent.manifest.type,
    description: agent.manifest.description,
    tags: agent.manifest.tags,
    run_mode: agent.manifest.run_mode,
    execution_engine: agent.manifest.execution_engine,
    callable: agent.manifest.callable,
    paid: isPaid(agent.manifest),
    price_credits: agent.manifest.price_credits,
    source_available: isSourceAvailable(agent.manifest),
  };
}
