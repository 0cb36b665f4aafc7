import type { Condition, UpdateSpec } from '../../ports/store.ts';
import { evaluateCondition } from '../store-semantics.ts';
import { KEY_ATTRIBUTES, PARTITION_KEY, TTL_ATTRIBUTE } from './dynamodb-table.ts';

/*
 * The Store's conditions and updates as DynamoDB expressions: placeholders for names and values,
 * the condition tree's translation, and the TTL-aware forms that make an expired item absent.
 */

/** Collects ExpressionAttributeNames/Values for one request; names and values are never inlined. */
export class Expr {
  private readonly names: Record<string, string> = {};
  private readonly values: Record<string, unknown> = {};
  private readonly placeholders = new Map<string, string>();
  private count = 0;

  /** `#name` for an attribute, readable where the name allows it, unique per attribute. */
  name(attr: string): string {
    const known = this.placeholders.get(attr);
    if (known) return known;
    const base = `#${attr.replace(/[^A-Za-z0-9_]/g, '_') || '_'}`;
    let placeholder = base;
    for (let i = 1; placeholder in this.names; i++) placeholder = `${base}_${i}`;
    this.names[placeholder] = attr;
    this.placeholders.set(attr, placeholder);
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.count++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  now(seconds: number): string {
    this.values[':now'] = seconds;
    return ':now';
  }

  /** DynamoDB rejects empty maps, so each is present only when used. */
  attributes(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    return {
      ...(Object.keys(this.names).length > 0 ? { ExpressionAttributeNames: { ...this.names } } : {}),
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: { ...this.values } } : {}),
    };
  }
}

interface Translated {
  expr: string;
  /** Needs parentheses when nested. Leaves never get them: DynamoDB rejects redundant parentheses. */
  compound: boolean;
}

const COMPARATORS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/** The condition as a DynamoDB expression, evaluated on the item as stored. */
export function translate(c: Condition, x: Expr): Translated {
  switch (c.op) {
    case 'exists':
      return { expr: `attribute_exists(${x.name(PARTITION_KEY)})`, compound: false };
    case 'notExists':
      return { expr: `attribute_not_exists(${x.name(PARTITION_KEY)})`, compound: false };
    case 'attrExists':
      return { expr: `attribute_exists(${x.name(c.attr)})`, compound: false };
    case 'attrNotExists':
      return { expr: `attribute_not_exists(${x.name(c.attr)})`, compound: false };
    case 'and':
    case 'or': {
      const [only, ...rest] = c.conditions;
      if (!only) {
        // Vacuous and() is true, or() is false; DynamoDB has no literals, so spell them out.
        const pk = x.name(PARTITION_KEY);
        return c.op === 'and'
          ? { expr: `attribute_exists(${pk}) OR attribute_not_exists(${pk})`, compound: true }
          : { expr: `attribute_exists(${pk}) AND attribute_not_exists(${pk})`, compound: true };
      }
      if (rest.length === 0) return translate(only, x);
      const joiner = c.op === 'and' ? ' AND ' : ' OR ';
      return { expr: c.conditions.map((s) => group(translate(s, x))).join(joiner), compound: true };
    }
    case 'not':
      return { expr: `NOT ${group(translate(c.condition, x))}`, compound: true };
    default:
      return { expr: `${x.name(c.attr)} ${COMPARATORS[c.op]} ${x.value(c.value)}`, compound: false };
  }
}

function group(t: Translated): string {
  return t.compound ? `(${t.expr})` : t.expr;
}

/** True for an item whose TTL has passed (false when there is no item or no numeric ttl). */
export function expiredCondition(x: Expr, now: number): string {
  return `${x.name(TTL_ATTRIBUTE)} <= ${x.now(now)}`;
}

/**
 * `condition` with an expired item counting as absent. On an absent item the condition has a
 * fixed value (`evaluateCondition(condition, undefined)`, which the translation also yields on a
 * missing item); an expired item must get that value, a live one its own:
 *   true on absent:  `(cond) OR #ttl <= :now`
 *   false on absent: `(cond) AND NOT (#ttl <= :now)`
 * so `notExists` becomes `attribute_not_exists(#pk) OR #ttl <= :now`.
 */
export function ttlAwareCondition(condition: Condition, x: Expr, now: number): string {
  const translated = group(translate(condition, x));
  return evaluateCondition(condition, undefined)
    ? `${translated} OR ${expiredCondition(x, now)}`
    : `${translated} AND NOT (${expiredCondition(x, now)})`;
}

/** An update's condition: the item is live (or absent) and the caller's condition holds. */
export function liveCondition(condition: Condition | undefined, x: Expr, now: number): string {
  const live = `NOT (${expiredCondition(x, now)})`;
  return condition ? `${group(translate(condition, x))} AND ${live}` : live;
}

/** SET / REMOVE / ADD clauses, or undefined for an empty spec (UpdateItem then just ensures the key). */
export function updateExpression(spec: UpdateSpec, x: Expr): string | undefined {
  const set: string[] = [];
  const remove: string[] = [];
  for (const [attr, value] of Object.entries(spec.set ?? {})) {
    // Setting undefined drops the attribute, as the SQLite adapter's JSON body does.
    if (value === undefined) remove.push(x.name(attr));
    else set.push(`${x.name(attr)} = ${x.value(value)}`);
  }
  for (const attr of spec.remove ?? []) remove.push(x.name(attr));
  const add = Object.entries(spec.add ?? {}).map(([attr, delta]) => `${x.name(attr)} ${x.value(delta)}`);
  const clauses = [
    set.length > 0 ? `SET ${set.join(', ')}` : '',
    remove.length > 0 ? `REMOVE ${remove.join(', ')}` : '',
    add.length > 0 ? `ADD ${add.join(', ')}` : '',
  ].filter(Boolean);
  return clauses.length > 0 ? clauses.join(' ') : undefined;
}

export function checkUpdate(spec: UpdateSpec): void {
  const touched = [...Object.keys(spec.set ?? {}), ...(spec.remove ?? []), ...Object.keys(spec.add ?? {})];
  if (touched.some((attr) => KEY_ATTRIBUTES.has(attr)))
    throw new Error('An update cannot change the item key');
}
