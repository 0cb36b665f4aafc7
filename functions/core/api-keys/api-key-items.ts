import { randomUUID } from 'node:crypto';
import type { Item } from '../../ports/store.ts';
import { keys } from '../keys.ts';
import { displayPrefix, hashApiKey } from './api-key-secret.ts';

/** The two items of a key: the lookup by hash (authentication) and the account's listing entry. */
export function apiKeyItems(input: {
  accountId: string;
  secret: string;
  name: string;
  agent: string | null;
  createdAt: string;
}): { id: string; byHash: Item; ofAccount: Item } {
  const id = randomUUID();
  const hash = hashApiKey(input.secret);
  const record = {
    id,
    name: input.name,
    prefix: displayPrefix(input.secret),
    agent: input.agent,
    created_at: input.createdAt,
  };
  return {
    id,
    byHash: { ...keys.apiKeyByHash(hash), ...record, hash, account_id: input.accountId },
    ofAccount: { ...keys.apiKeyOfAccount(input.accountId, id), ...record, hash },
  };
}
