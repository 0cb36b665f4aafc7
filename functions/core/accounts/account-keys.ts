import type { ItemKey } from '../../ports/store.ts';

/**
 * The key shapes of an account and its uniqueness guards (docs/data-model.md). Ids are UUIDs;
 * org slugs are validated to [a-z0-9-]; emails are keyed lowercased.
 */
export const accountKeys = {
  account: (accountId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /** Uniqueness guard and lookup: org slug -> account. */
  org: (slug: string): ItemKey => ({ pk: `ORG#${slug}`, sk: 'ORG' }),
  /** Uniqueness guard and lookup: email -> account. */
  email: (email: string): ItemKey => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),
};
