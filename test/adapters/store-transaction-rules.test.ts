/**
 * store-semantics.ts's rules for a transaction, which every adapter enforces as DynamoDB does: 1 to
 * 100 operations, and no two on one item, whatever their kinds, in a short transaction (compared
 * pair by pair) and a long one (through a set of keys). In memory.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateEach, validateTransaction } from '../../functions/adapters/store-semantics.ts';
import { cond, type TransactOp } from '../../functions/ports/store.ts';

const key = (i: number, sk = 'S') => ({ pk: `P#${i}`, sk });
const kinds: ((i: number, sk?: string) => TransactOp)[] = [
  (i, sk) => ({ put: { ...key(i, sk), v: 1 } }),
  (i, sk) => ({ update: key(i, sk), spec: { set: { v: 2 } } }),
  (i, sk) => ({ delete: key(i, sk) }),
  (i, sk) => ({ check: key(i, sk), condition: cond.exists() }),
];
const ops = (n: number) =>
  Array.from({ length: n }, (_, i) => (kinds[i % 4] as (i: number) => TransactOp)(i));

describe('transaction rules', () => {
  it('takes 1 to 100 operations on distinct items', () => {
    for (const n of [1, 2, 8, 9, 100]) validateTransaction(ops(n));
    assert.throws(() => validateTransaction([]), /1 to 100/);
    assert.throws(() => validateTransaction(ops(101)), /1 to 100/);
  });

  it('refuses two operations on one item, whatever their kinds, in a short or a long transaction', () => {
    for (const n of [2, 5, 8, 9, 40]) {
      for (const first of kinds)
        for (const second of kinds) {
          const list = ops(n);
          list[0] = first(1000);
          list[n - 1] = second(1000);
          assert.throws(() => validateTransaction(list), /two operations on one item/, `${n} ops`);
        }
    }
  });

  it('tells items apart by both parts of their key', () => {
    for (const n of [3, 12]) {
      const list = ops(n);
      list[0] = { put: { ...key(1000, 'A'), v: 1 } };
      list[1] = { put: { ...key(1000, 'B'), v: 1 } };
      list[2] = { put: { ...key(1001, 'A'), v: 1 } };
      validateTransaction(list);
    }
  });

  it('writeEach takes no check operations', () => {
    assert.throws(() => validateEach(ops(4)), /no check operations/);
  });
});
