import { InvalidCursorError, type QuerySpec } from '../../ports/store.ts';
import { PARTITION_KEY, SORT_KEY } from './dynamodb-table.ts';

/*
 * A query's sort-key range as DynamoDB key conditions, and the cursors of its pages (checked to be
 * keys of that same query), with DynamoDB's UTF-8 byte ordering of strings.
 */

/**
 * The sort key restriction as a key condition builder; undefined for none, 'empty' when it can
 * match nothing. Empty strings are handled here because DynamoDB rejects them as key values.
 */
export function skRange(
  sk: QuerySpec['sk'],
): ((name: string, value: (v: string) => string) => string) | undefined | 'empty' {
  if (!sk) return undefined;
  if ('beginsWith' in sk) {
    const prefix = sk.beginsWith;
    return prefix === '' ? undefined : (n, v) => `begins_with(${n}, ${v(prefix)})`;
  }
  if ('between' in sk) {
    const [low, high] = sk.between;
    if (compareUtf8(low, high) > 0 || high === '') return 'empty';
    return low === '' ? (n, v) => `${n} <= ${v(high)}` : (n, v) => `${n} BETWEEN ${v(low)} AND ${v(high)}`;
  }
  if ('gt' in sk) {
    const low = sk.gt;
    return low === '' ? undefined : (n, v) => `${n} > ${v(low)}`;
  }
  const high = sk.lt;
  return high === '' ? 'empty' : (n, v) => `${n} < ${v(high)}`;
}

// ---------------------------------------------------------------------------------------------
// Cursors, keys, errors

/**
 * A cursor is base64url(JSON(LastEvaluatedKey)). Anything that is not a key of this query's
 * shape, in this partition and sort key range, is rejected here rather than by DynamoDB.
 */
export function decodeCursor(
  cursor: string,
  spec: QuerySpec,
  pkAttr: string,
  skAttr: string,
): Record<string, string> {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (typeof key !== 'object' || key === null || Array.isArray(key)) throw new InvalidCursorError();
  const record = key as Record<string, unknown>;
  const expected = new Set([PARTITION_KEY, SORT_KEY, pkAttr, skAttr]);
  const names = Object.keys(record);
  const wellFormed =
    names.length === expected.size &&
    names.every((n) => expected.has(n) && typeof record[n] === 'string' && record[n] !== '');
  if (!wellFormed || record[pkAttr] !== spec.pk || !skMatches(record[skAttr] as string, spec.sk)) {
    throw new InvalidCursorError();
  }
  return record as Record<string, string>;
}

function skMatches(value: string, sk: QuerySpec['sk']): boolean {
  if (!sk) return true;
  if ('beginsWith' in sk) return value.startsWith(sk.beginsWith);
  if ('between' in sk)
    return compareUtf8(value, sk.between[0]) >= 0 && compareUtf8(value, sk.between[1]) <= 0;
  if ('gt' in sk) return compareUtf8(value, sk.gt) > 0;
  return compareUtf8(value, sk.lt) < 0;
}

/** DynamoDB orders strings by their UTF-8 bytes. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
