/**
 * Reading an agent record (GET /agents, GET /agents/{id}): the manifest's fields sit at its top
 * level next to the version's own, so what the manifest says (is_public, price_credits, schemas)
 * is typed only as JSON there and is read through these.
 */

/** The fields a record adds to the manifest: the version's identity, state and bookkeeping. */
const VERSION_FIELDS = new Set([
  'id',
  'org',
  'ref',
  'version',
  'workspace_id',
  'status',
  'paid',
  'source_available',
  'skill_files',
  'bundle',
  'published_by',
  'forked_from',
  'created_at',
  'updated_at',
  'deprecated_at',
  'sunset_at',
  'deleted_at',
  'warnings',
  'metadata',
]);

type AgentLike = Record<string, unknown>;

/** `public` (listed in the directory) or `private`. */
export function visibilityOf(agent: AgentLike): 'public' | 'private' {
  return agent.is_public === true ? 'public' : 'private';
}

/** `free`, or what one call costs in credits. */
export function priceOf(agent: AgentLike): string {
  const credits = typeof agent.price_credits === 'number' ? agent.price_credits : 0;
  return credits > 0 ? `${credits} ${credits === 1 ? 'credit' : 'credits'} a call` : 'free';
}

/** The manifest as published (normalised, defaults filled in): the record without the version's fields. */
export function manifestOf(agent: AgentLike): Record<string, unknown> {
  return Object.fromEntries(Object.entries(agent).filter(([k]) => !VERSION_FIELDS.has(k)));
}

/** The endpoint a call goes to when none is named. */
export function defaultEndpointOf(agent: AgentLike): string {
  return typeof agent.default_endpoint === 'string' ? agent.default_endpoint : 'run';
}
