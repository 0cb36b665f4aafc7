import * as z from 'zod';
import type { ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';

/** The key shapes of a workspace and its slug guard (docs/data-model.md); slugs are [a-z0-9-]. */
export const workspaceKeys = {
  workspace: (workspaceId: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: 'WS' }),
  /** Uniqueness guard and lookup: workspace slug -> workspace. */
  slug: (slug: string): ItemKey => ({ pk: `WSSLUG#${slug}`, sk: 'WSSLUG' }),
};

/**
 * The workspace record. `owner_count` is kept by the membership transactions (a workspace keeps
 * an owner); a personal workspace also names its account.
 */
export const workspaceEntity = defineEntity({
  name: 'workspace',
  keys: workspaceKeys,
  schema: z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    personal: z.boolean().default(false),
    owner_count: z.number(),
    owner_account_id: z.string().optional(),
    created_at: z.string(),
  }),
  locate: (ws) => workspaceKeys.workspace(ws.id),
});
