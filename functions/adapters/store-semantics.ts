import type { Condition, Item, Scalar, TransactOp } from '../ports/store.ts';

/**
 * The Store port's condition semantics, as DynamoDB defines them: a comparison with a missing
 * attribute or a value of another type is false (`ne` included); `exists`/`notExists` test the
 * item itself. The SQLite adapter evaluates conditions with this; the contract suite checks that
 * DynamoDB agrees.
 */
export function evaluateCondition(condition: Condition | undefined, item: Item | undefined): boolean {
  if (!condition) return true;
  switch (condition.op) {
    case 'exists':
      return item !== undefined;
    case 'notExists':
      return item === undefined;
    case 'attrExists':
      return item?.[condition.attr] !== undefined;
    case 'attrNotExists':
      return item?.[condition.attr] === undefined;
    case 'and':
      return condition.conditions.every((c) => evaluateCondition(c, item));
    case 'or':
      return condition.conditions.some((c) => evaluateCondition(c, item));
    case 'not':
      return !evaluateCondition(condition.condition, item);
    default: {
      const actual = item?.[condition.attr];
      if (actual === undefined || !isScalar(actual) || typeof actual !== typeof condition.value) return false;
      return compare(condition.op, actual, condition.value);
    }
  }
}

function isScalar(v: unknown): v is Scalar {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

function compare(op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte', a: Scalar, b: Scalar): boolean {
  if (op === 'eq') return a === b;
  if (op === 'ne') return a !== b;
  if (a === null || b === null || typeof a === 'boolean' || typeof b === 'boolean') return false;
  switch (op) {
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
  }
}

/** Rules DynamoDB enforces on TransactWriteItems, enforced identically by every adapter. */
export function validateTransaction(ops: TransactOp[]): void {
  if (ops.length === 0 || ops.length > 100) throw new Error('A transaction holds 1 to 100 operations');
  const seen = new Set<string>();
  for (const op of ops) {
    const key =
      'put' in op ? op.put : 'update' in op ? op.update : 'delete' in op ? op.delete : op.check;
    const id = `${key.pk}\u0000${key.sk}`;
    if (seen.has(id)) throw new Error('A transaction cannot include two operations on one item');
    seen.add(id);
  }
}
