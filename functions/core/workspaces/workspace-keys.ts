import type { ItemKey } from '../../ports/store.ts';

/** The key shapes of a workspace and its slug guard (docs/data-model.md); slugs are [a-z0-9-]. */
export const workspaceKeys = {
  workspace: (workspaceId: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: 'WS' }),
  /** Uniqueness guard and lookup: workspace slug -> workspace. */
  slug: (slug: string): ItemKey => ({ pk: `WSSLUG#${slug}`, sk: 'WSSLUG' }),
};
