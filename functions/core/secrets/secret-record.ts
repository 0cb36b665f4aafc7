import type { ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { secretSchema } from './secret-schemas.ts';

/**
 * The key shapes of a secret's listing record (docs/data-model.md): name and timestamps in its
 * workspace's partition; the value lives in the vault, never here. Names are validated upper-case.
 */
export const secretKeys = {
  secret: (workspaceId: string, name: string): ItemKey => ({ pk: `WS#${workspaceId}`, sk: `SECRET#${name}` }),
  /** The sort-key prefix of a workspace's secrets. */
  prefix: 'SECRET#',
};

/** A secret's listing record: the API's secret object (secret-schemas.ts), in its workspace. */
export const secretEntity = defineEntity({
  name: 'secret',
  keys: secretKeys,
  schema: secretSchema,
  locate: (secret, workspaceId: string) => secretKeys.secret(workspaceId, secret.name),
});
