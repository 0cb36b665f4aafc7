import { randomUUID } from 'node:crypto';
import type { Item, ItemKey } from '../../ports/store.ts';
import { displayPrefix, hashApiKey } from './api-key-secret.ts';

/**
 * The key shapes of API keys (docs/data-model.md): the lookup by the SHA-256 of the key, the
 * account's listing entry, and the run credential, a credential of its own shape.
 */
export const apiKeyKeys = {
  /** Authentication lookup: SHA-256 of the key -> account. */
  byHash: (hash: string): ItemKey => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  /** Listing and deletion: the account's keys by id. */
  ofAccount: (accountId: string, keyId: string): ItemKey => ({
    pk: `ACCOUNT#${accountId}`,
    sk: `APIKEY#${keyId}`,
  }),
  ofAccountPrefix: 'APIKEY#',
  /**
   * A run credential (an orchestrator run's PLATFORM_SERVICE_KEY) by the SHA-256 of its value: a
   * shape of its own, so the API-key lookup above can never find one.
   */
  runCredential: (hash: string): ItemKey => ({ pk: `RUNKEY#${hash}`, sk: 'RUNKEY' }),
};

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
    byHash: { ...apiKeyKeys.byHash(hash), ...record, hash, account_id: input.accountId },
    ofAccount: { ...apiKeyKeys.ofAccount(input.accountId, id), ...record, hash },
  };
}
