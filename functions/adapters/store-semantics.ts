import {
  type Condition,
  type Item,
  type ItemKey,
  MAX_TRANSACTION_OPS,
  type Scalar,
  type TransactOp,
} from '../ports/store.ts';

/**
 * The Store port's condition semantics, as DynamoDB defines them: `eq` and the ordering
 * comparisons are false for a missing attribute or a value of another type, while `ne` is exactly
 * `not(eq)`, so it is true for a missing attribute or a value of another type (DynamoDB's `<>`);
 * strings order by their UTF-8 bytes; `exists`/`notExists` test the item itself. The SQLite
 * adapter evaluates conditions with this; the contract suite checks that DynamoDB agrees.
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
      const comparable = actual !== undefined && isScalar(actual) && typeof actual === typeof condition.value;
      // DynamoDB's `a <> v` is exactly NOT (a = v): true for a missing attribute or another type.
      if (condition.op === 'ne') return !(comparable && actual === condition.value);
      return comparable && compare(condition.op, actual, condition.value);
    }
  }
}

function isScalar(v: unknown): v is Scalar {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** `a` and `b` have the same type. Strings order by UTF-8 bytes, as in DynamoDB (not JS's UTF-16). */
function compare(op: 'eq' | 'lt' | 'lte' | 'gt' | 'gte', a: Scalar, b: Scalar): boolean {
  if (op === 'eq') return a === b;
  let order: number;
  if (typeof a === 'number' && typeof b === 'number')
    order = a < b ? -1 : a > b ? 1 : a === b ? 0 : Number.NaN;
  else if (typeof a === 'string' && typeof b === 'string')
    order = Buffer.compare(Buffer.from(a), Buffer.from(b));
  else return false;
  switch (op) {
    case 'lt':
      return order < 0;
    case 'lte':
      return order <= 0;
    case 'gt':
      return order > 0;
    case 'gte':
      return order >= 0;
  }
}

/** What Store.writeEach takes: a transaction's ops, no `check` among them (a check writes nothing). */
export function validateEach(ops: TransactOp[]): void {
  validateTransaction(ops);
  if (ops.some((op) => 'check' in op)) throw new Error('writeEach takes no check operations');
}

/** Rules DynamoDB enforces on TransactWriteItems, enforced identically by every adapter. */
export function validateTransaction(ops: TransactOp[]): void {
  if (ops.length === 0 || ops.length > MAX_TRANSACTION_OPS)
    throw new Error('A transaction holds 1 to 100 operations');
  // A few ops (a call's record holds four or five) are compared pair by pair: a set of their keys
  // joined would build and hash a new string an op, every call.
  if (ops.length <= FEW_OPS) {
    for (let i = 1; i < ops.length; i++) {
      const key = opKey(ops[i] as TransactOp);
      for (let j = 0; j < i; j++) {
        const other = opKey(ops[j] as TransactOp);
        if (key.pk === other.pk && key.sk === other.sk) throw twoOnOneItem();
      }
    }
    return;
  }
  const seen = new Set<string>();
  for (const op of ops) {
    const key = opKey(op);
    const id = `${key.pk}\u0000${key.sk}`;
    if (seen.has(id)) throw twoOnOneItem();
    seen.add(id);
  }
}

/** Past this many ops a transaction's keys are checked for repeats through a Set. */
const FEW_OPS = 8;

function opKey(op: TransactOp): ItemKey {
  return 'put' in op ? op.put : 'update' in op ? op.update : 'delete' in op ? op.delete : op.check;
}

function twoOnOneItem(): Error {
  return new Error('A transaction cannot include two operations on one item');
}
