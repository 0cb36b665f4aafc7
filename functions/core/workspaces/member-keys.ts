import type { ItemKey } from '../../ports/store.ts';

/**
 * The key shapes of a membership (docs/data-model.md): in its workspace's partition, and in GSI1
 * under its account, so both the members of a workspace and the workspaces of an account are one
 * query.
 */
export const memberKeys = {
  member: (workspaceId: string, accountId: string): ItemKey => ({
    pk: `WS#${workspaceId}`,
    sk: `MEMBER#${accountId}`,
  }),
  /** The sort-key prefix of a workspace's memberships. */
  prefix: 'MEMBER#',
  /** GSI1 partition of an account's memberships. */
  ofAccount: (accountId: string) => `ACCOUNT#${accountId}#WS`,
};
