import type { DeploymentMeter } from './deployment-meter.ts';
import { type Exchange, MeteringProxy } from './metering-proxy.ts';

/*
 * What the meter reads off the DynamoDB wire (metering-proxy.ts).
 */

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const DATA_OPERATIONS = new Set([
  ...READS,
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'ExecuteStatement',
]);

interface Consumed {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/**
 * One DynamoDB exchange: the request units its answer's ConsumedCapacity reports (one object, or
 * one per table for transactions and batches). DynamoDB Local reports them for every item
 * operation, transactions and batches included, as DynamoDB counts them (4 KB reads, 1 KB writes,
 * index writes in TOTAL, transactions doubled), except a transaction of several items of one size
 * (see below). A refused conditional write carries no figure but is billed: counted apart.
 */
export function meterDynamoDb(meter: DeploymentMeter): Exchange {
  return (operation, request, status, answer) => {
    if (!DATA_OPERATIONS.has(operation)) return;
    const a = (answer ?? {}) as { ConsumedCapacity?: Consumed | Consumed[]; __type?: string };
    if (status !== 200) {
      const type = String(a.__type ?? '');
      if (type.endsWith('ConditionalCheckFailedException') || type.endsWith('TransactionCanceledException'))
        meter.dynamodbConditionFailure();
      return;
    }
    if (a.ConsumedCapacity === undefined) {
      meter.dynamodbRequest(operation, undefined);
      return;
    }
    let read = 0;
    let write = 0;
    for (const c of [a.ConsumedCapacity].flat()) {
      if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
        read += c.ReadCapacityUnits ?? 0;
        write += c.WriteCapacityUnits ?? 0;
      } else if (READS.has(operation)) read += c.CapacityUnits ?? 0;
      else write += c.CapacityUnits ?? 0;
    }
    if (operation === 'TransactWriteItems') {
      // DynamoDB Local reports a transaction of same-sized items as if it held one; DynamoDB bills
      // every action of it at least 2 WRU (two phases, a KB or less): that floor is taken.
      const actions = ((request ?? {}) as { TransactItems?: unknown[] }).TransactItems?.length ?? 0;
      write = Math.max(write, 2 * actions);
    }
    meter.dynamodbRequest(operation, { read, write });
  };
}

/** `target` behind a metering pass-through, closed with the deployment. */
export async function meteredEndpoint(
  target: string,
  observe: Exchange,
  closers: (() => Promise<void>)[],
): Promise<string> {
  const proxy = new MeteringProxy(target, observe);
  const endpoint = await proxy.listen();
  closers.push(() => proxy.close());
  return endpoint;
}
