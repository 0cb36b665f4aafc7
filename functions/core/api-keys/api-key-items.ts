import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { Item, ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { apiKeySchema } from './api-key-schemas.ts';
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

/** What both items of a key hold: the API's key object and the key's SHA-256 (never the key). */
const storedKeyFields = {
  ...apiKeySchema.shape,
  id: z.string(),
  agent: z.string().nullable().default(null),
  hash: z.string(),
};

/** A key's entry in its account's partition: listing and deletion. */
export const apiKeyEntity = defineEntity({
  name: 'API key',
  keys: apiKeyKeys,
  schema: z.object(storedKeyFields),
  locate: (key, accountId: string) => apiKeyKeys.ofAccount(accountId, key.id),
});

/** A key's authentication lookup, by its hash, naming its account. */
export const apiKeyLookupEntity = defineEntity({
  name: 'API key lookup',
  keys: apiKeyKeys,
  schema: z.object({ ...storedKeyFields, account_id: z.string() }),
  locate: (key) => apiKeyKeys.byHash(key.hash),
});

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
    byHash: apiKeyLookupEntity.toItem({ ...record, hash, account_id: input.accountId }),
    ofAccount: apiKeyEntity.toItem({ ...record, hash }, input.accountId),
  };
}
