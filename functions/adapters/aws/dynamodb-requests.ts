import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import type { AttrValue, Item, ItemKey, TransactOp, UpdateSpec } from '../../ports/store.ts';
import {
  checkUpdate,
  Expr,
  expiredCondition,
  liveCondition,
  ttlAwareCondition,
  updateExpression,
} from './dynamodb-expressions.ts';

/*
 * The parts of the requests DynamoDbStore sends: keys, inputs without unset fields, one
 * transaction op as a TransactWriteItem, and the fresh item that replaces an expired one.
 */

/** The object without its undefined properties, so requests carry only what they set. */
export function compact<T extends object>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as T;
}

export function itemKey(key: ItemKey): ItemKey {
  return { pk: key.pk, sk: key.sk };
}

/** One op of a transaction, its conditions TTL-aware at `now` (an update of an expired item as a replacing put). */
export function transactItem(
  TableName: string,
  op: TransactOp,
  now: number,
  replaceExpired: boolean,
): TransactWriteItem {
  const x = new Expr();
  if ('put' in op) {
    const condition = op.condition && ttlAwareCondition(op.condition, x, now);
    return { Put: compact({ TableName, Item: op.put, ConditionExpression: condition, ...x.attributes() }) };
  }
  if ('update' in op) {
    checkUpdate(op.spec);
    if (replaceExpired) {
      const item = freshItem(op.update, op.spec);
      return {
        Put: { TableName, Item: item, ConditionExpression: expiredCondition(x, now), ...x.attributes() },
      };
    }
    const update = updateExpression(op.spec, x);
    if (!update) throw new Error('A transactional update needs at least one set, remove or add');
    return {
      Update: {
        TableName,
        Key: itemKey(op.update),
        UpdateExpression: update,
        ConditionExpression: liveCondition(op.condition, x, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...x.attributes(),
      },
    };
  }
  if ('delete' in op) {
    const condition = op.condition && ttlAwareCondition(op.condition, x, now);
    return {
      Delete: compact({
        TableName,
        Key: itemKey(op.delete),
        ConditionExpression: condition,
        ...x.attributes(),
      }),
    };
  }
  const condition = ttlAwareCondition(op.condition, x, now);
  return {
    ConditionCheck: {
      TableName,
      Key: itemKey(op.check),
      ConditionExpression: condition,
      ...x.attributes(),
    },
  };
}

/** The item an update creates when there is none (or only an expired one): the store's `applyUpdate` on nothing. */
export function freshItem(key: ItemKey, spec: UpdateSpec): Item {
  const item: Item = { pk: key.pk, sk: key.sk };
  for (const [attr, value] of Object.entries(spec.set ?? {})) if (value !== undefined) item[attr] = value;
  for (const attr of spec.remove ?? []) delete item[attr];
  for (const [attr, delta] of Object.entries(spec.add ?? {})) {
    const before: AttrValue = item[attr] ?? 0;
    if (typeof before !== 'number') throw new Error(`Cannot add to non-numeric attribute ${attr}`);
    item[attr] = before + delta;
  }
  return item;
}
