import type * as z from 'zod';
import type { AttrValue, Item, ItemKey } from '../ports/store.ts';
import { deepFreeze } from '../shared/deep-freeze.ts';

/**
 * The entity model over the Store port (docs/data-model.md): each entity declares its key shapes,
 * where a record sits in the table and its indexes (`locate`), and a zod schema of the attributes
 * it stores. `toItem` writes a record with its key and index attributes; `fromItem` strips those and
 * parses the rest, so a malformed stored item is an internal error naming the entity and its key,
 * never a silently wrong object. Items written before a field existed read through the schema's
 * defaults, so the stored shapes stay what they were.
 */

/** The attributes that place an item (key, indexes, expiry); stripped before the schema parses. */
export interface Placement extends ItemKey {
  gsi1pk?: string;
  gsi1sk?: string;
  gsi2pk?: string;
  gsi2sk?: string;
  ttl?: number;
}

const PLACEMENT = new Set(['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'ttl']);

/** A stored item that does not parse as its entity: a defect or a corrupt item, never a client error. */
export class MalformedItemError extends Error {
  override name = 'MalformedItemError';
  constructor(entity: string, key: ItemKey, issues: string) {
    super(`Stored ${entity} ${key.pk} / ${key.sk} is malformed: ${issues}`);
  }
}

export interface EntityDefinition<S extends z.ZodObject, K, A extends unknown[] = []> {
  /** Named in errors (MalformedItemError). */
  name: string;
  /** The entity's key shapes: builders of its item keys and of its index partitions. */
  keys: K;
  /**
   * Where a record sits: its key, its index attributes (absent when it is not indexed) and `ttl`.
   * `context` is what the key needs beyond the record (a timeline entry's owner, say).
   */
  locate: (record: z.output<S>, ...context: A) => Placement;
  /** The attributes stored beside the placement. */
  schema: S;
}

export interface Entity<S extends z.ZodObject, K, A extends unknown[] = []>
  extends EntityDefinition<S, K, A> {
  toItem(record: z.output<S>, ...context: A): Item;
  fromItem(item: Item): z.output<S>;
  /** Parses a record stored inside another item (`where` names that item in the error). */
  parse(value: unknown, where: ItemKey): z.output<S>;
  /**
   * The record as one attribute value, to store inside another item (`parse` reads it back): its
   * fields without placement, an undefined field left out as the stores leave it out.
   */
  embed(record: z.output<S>): { [attr: string]: AttrValue };
}

export function defineEntity<S extends z.ZodObject, K, A extends unknown[] = []>(
  definition: EntityDefinition<S, K, A>,
): Entity<S, K, A> {
  // The records of items read shared (frozen: ports/store.ts, ReadOptions), parsed once each.
  const sharedRecords = new WeakMap<Item, z.output<S>>();
  return {
    ...definition,
    toItem(record, ...context) {
      return { ...attributes(record), ...definition.locate(record, ...context) };
    },
    fromItem(item) {
      // An item read shared is the same frozen object for every reader of its key until the row
      // changes: so is its record, frozen too (a call reads its key, account and version so).
      const shared = Object.isFrozen(item);
      if (shared) {
        const known = sharedRecords.get(item);
        if (known) return known;
      }
      // The other attributes copied, rather than the item copied and the placement deleted: a
      // delete turns the copy into a dictionary, which the schema's parse then reads slowly, and
      // this runs for every record a call reads.
      const rest: Record<string, unknown> = {};
      for (const attr in item) if (!PLACEMENT.has(attr)) rest[attr] = item[attr];
      const record = this.parse(rest, item);
      if (shared) sharedRecords.set(item, deepFreeze(record));
      return record;
    },
    parse(value, where) {
      return parseStored(definition.name, definition.schema, value, where);
    },
    embed(record) {
      const value: { [attr: string]: AttrValue } = {};
      for (const [attr, v] of Object.entries(attributes(record))) if (v !== undefined) value[attr] = v;
      return value;
    },
  };
}

/** Parses stored data with `schema`; a mismatch is a MalformedItemError naming `what` and the item. */
export function parseStored<T extends z.ZodType>(
  what: string,
  schema: T,
  value: unknown,
  where: ItemKey,
): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`);
    throw new MalformedItemError(what, where, issues.join('; '));
  }
  return parsed.data;
}

/**
 * A record's fields as item attributes. Records are plain JSON data (what their schema parses), so
 * every field is an attribute value; this is the one place that says so to the type system.
 */
function attributes(record: object): Record<string, AttrValue | undefined> {
  return Object.fromEntries(Object.entries(record)) as Record<string, AttrValue | undefined>;
}
