import type { AttrValue, Item } from '../../ports/store.ts';

/*
 * The columns beside an item's key that the embedded store's indexes read (sqlite-schema.ts): what
 * a row's GSIs and expiry are, and which of them a rewrite of the row keeps, so that an UPDATE
 * assigns only the columns that change (SQLite rewrites an index's entry for every column an UPDATE
 * assigns, even to the same value).
 */

/** The columns an item's indexes hold besides its key: gsi1pk, gsi1sk, gsi2pk, gsi2sk and ttl. */
export type IndexColumns = [string | null, string | null, string | null, string | null, number | null];

export function indexColumns(item: Item): IndexColumns {
  return [
    indexKey(item.gsi1pk, item.gsi1sk),
    indexKey(item.gsi1sk, item.gsi1pk),
    indexKey(item.gsi2pk, item.gsi2sk),
    indexKey(item.gsi2sk, item.gsi2pk),
    typeof item.ttl === 'number' ? item.ttl : null,
  ];
}

/** Which of a row's index columns a write keeps: all of them, all but the expiry, or not those. */
export function keptColumns(next: IndexColumns, stored: IndexColumns): 'all' | 'gsi' | 'none' {
  if (next[0] !== stored[0] || next[1] !== stored[1] || next[2] !== stored[2] || next[3] !== stored[3])
    return 'none';
  return next[4] === stored[4] ? 'all' : 'gsi';
}

/** A GSI projects an item only when both of its key attributes are strings (as DynamoDB does). */
function indexKey(value: AttrValue | undefined, partner: AttrValue | undefined): string | null {
  return typeof value === 'string' && typeof partner === 'string' ? value : null;
}
