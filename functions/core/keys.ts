import type { ItemKey } from '../ports/store.ts';

/**
 * Every key shape in the single table, in one place (docs/data-model.md lists the access
 * patterns). Entity prefixes keep shapes from colliding; ids are UUIDs or hashes, never user text,
 * except slugs, which are validated to [a-z0-9-].
 */
export const keys = {
  account: (accountId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /** Uniqueness guard and lookup: org slug -> account. */
  org: (slug: string): ItemKey => ({ pk: `ORG#${slug}`, sk: 'ORG' }),
  /** Uniqueness guard and lookup: email -> account. */
  email: (email: string): ItemKey => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),

  /** Authentication lookup: SHA-256 of the key -> account. */
  apiKeyByHash: (hash: string): ItemKey => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  /**
   * A run credential (an orchestrator run's PLATFORM_SERVICE_KEY) by the SHA-256 of its value: a
   * shape of its own, so the API-key lookup above can never find one.
   */
  runCredential: (hash: string): ItemKey => ({ pk: `RUNKEY#${hash}`, sk: 'RUNKEY' }),
  /** Listing and deletion: the account's keys by id. */
  apiKeyOfAccount: (accountId: string, keyId: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `APIKEY#${keyId}`,
  }),
  apiKeysOfAccountPrefix: 'APIKEY#',

  /** Daily sandbox-run counter (code runtime and managed loop), counted apart from LLM calls. */
  sandboxDailyUsage: (accountId: string, day: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `USAGE#SANDBOX#${day}`,
  }),
  /** Daily call counter, per account per UTC day (YYYY-MM-DD). */
  dailyUsage: (accountId: string, day: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `USAGE#DAY#${day}`,
  }),

  /** Concurrent-request slot `n` of an account (held by a call, expires with its lease). */
  concurrencySlot: (accountId: string, n: number): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `LEASE#${n}`,
  }),

  workspace: (workspaceId: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: 'WS' }),
  /** Uniqueness guard and lookup: workspace slug -> workspace. */
  workspaceSlug: (slug: string): ItemKey => ({ pk: `WSSLUG#${slug}`, sk: 'WSSLUG' }),
  member: (workspaceId: string, accountId: string): ItemKey => ({
    pk: `WS#${workspaceId}`,
    sk: `MEMBER#${accountId}`,
  }),
  membersPrefix: 'MEMBER#',
  /** GSI1 partition of an account's memberships. */
  membershipsOfAccount: (accountId: string) => `ACCOUNT#${accountId}#WS`,

  /** A secret's listing record (name, timestamps); the value lives in the vault. */
  secret: (workspaceId: string, name: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: `SECRET#${name}` }),
  secretsPrefix: 'SECRET#',

  /** One agent version (each version has its own id). */
  agentVersion: (agentId: string): ItemKey => ({ pk: `AGENT#${agentId}`, sk: 'AGENT' }),
  /** GSI1 partition of a workspace's agent versions, sorted by name and version. */
  agentsOfWorkspace: (workspaceId: string) => `WS#${workspaceId}#AGENTS`,
  /** Per org/name: the version counter and the directory entry (GSI2 when public). */
  agentHead: (org: string, name: string): ItemKey => ({ pk: `ORGAGENT#${org}/${name}`, sk: 'HEAD' }),
  /** Per org/name/version: the id of that version. */
  agentVersionRef: (org: string, name: string, n: number): ItemKey => ({
    pk: `ORGAGENT#${org}/${name}`,
    sk: `V#${String(n).padStart(6, '0')}`,
  }),
  agentVersionRefPrefix: 'V#',
  /** GSI2 partition of the public directory (one head per public agent). */
  publicAgents: 'PUBLIC#AGENTS',
  /** Reverse dependency: the agents that pin org/name@vN. */
  dependent: (target: string, dependentId: string): ItemKey => ({
    pk: `DEPENDENTS#${target}`,
    sk: `AGENT#${dependentId}`,
  }),
  dependentsOf: (target: string) => `DEPENDENTS#${target}`,
  /** Execution log lines of an agent version. */
  agentLogPrefix: 'LOG#',

  task: (taskId: string): ItemKey => ({ pk: `TASK#${taskId}`, sk: 'TASK' }),
  /** GSI1 partition of a workspace's tasks, sorted by creation time. */
  tasksOfWorkspace: (workspaceId: string) => `WS#${workspaceId}#TASK`,
};
