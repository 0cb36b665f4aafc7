import type { ItemKey } from '../../ports/store.ts';

/**
 * The key shapes of a secret's listing record (docs/data-model.md): name and timestamps in its
 * workspace's partition; the value lives in the vault, never here. Names are validated upper-case.
 */
export const secretKeys = {
  secret: (workspaceId: string, name: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: `SECRET#${name}` }),
  /** The sort-key prefix of a workspace's secrets. */
  prefix: 'SECRET#',
};
