import * as z from 'zod';
import type { ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { ROLES } from './workspace-schemas.ts';

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

/** A membership: an account's role in a workspace, since when. */
export const memberEntity = defineEntity({
  name: 'membership',
  keys: memberKeys,
  schema: z.object({
    workspace_id: z.string(),
    account_id: z.string(),
    role: z.enum(ROLES),
    joined_at: z.string(),
  }),
  locate: (m) => ({
    ...memberKeys.member(m.workspace_id, m.account_id),
    gsi1pk: memberKeys.ofAccount(m.account_id),
    gsi1sk: `${m.joined_at}#${m.workspace_id}`,
  }),
});
