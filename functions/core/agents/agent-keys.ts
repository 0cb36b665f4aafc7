import type { ItemKey } from '../../ports/store.ts';

/**
 * The key shapes of an agent's items (docs/data-model.md): its versions (each with its own id),
 * the head and version lookups per org/name, reverse dependencies and execution log lines.
 * Org and name are validated to [a-z0-9-].
 */
export const agentKeys = {
  /** One agent version (each version has its own id). */
  version: (agentId: string): ItemKey => ({ pk: `AGENT#${agentId}`, sk: 'AGENT' }),
  /** GSI1 partition of a workspace's agent versions, sorted by name and version. */
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#AGENTS`,
  /** Per org/name: the version counter and the directory entry (GSI2 when public). */
  head: (org: string, name: string): ItemKey => ({ pk: `ORGAGENT#${org}/${name}`, sk: 'HEAD' }),
  /** Per org/name/version: the id of that version. */
  versionRef: (org: string, name: string, n: number): ItemKey => ({
    pk: `ORGAGENT#${org}/${name}`,
    sk: `V#${String(n).padStart(6, '0')}`,
  }),
  versionRefPrefix: 'V#',
  /** GSI2 partition of the public directory (one head per public agent). */
  publicDirectory: 'PUBLIC#AGENTS',
  /** Reverse dependency: the agents that pin org/name@vN. */
  dependent: (target: string, dependentId: string): ItemKey => ({
    pk: `DEPENDENTS#${target}`,
    sk: `AGENT#${dependentId}`,
  }),
  dependentsOf: (target: string) => `DEPENDENTS#${target}`,
  /** Execution log lines of an agent version (in its partition). */
  logPrefix: 'LOG#',
};
