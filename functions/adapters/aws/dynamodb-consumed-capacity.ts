import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Every item request the adapters send asks DynamoDB what it consumed (ReturnConsumedCapacity
 * TOTAL: the table's and its indexes' units together; INDEXES would split them, but DynamoDB Local
 * leaves index writes out of that split). The figure is read where it is wanted, not here: the
 * emulated deployment's meter reads it off the wire (functions/emulator/wire-metering.ts) and
 * prices it (npm run bench:aws-cost). On AWS the answer's few bytes go unused: DynamoDB already
 * publishes ConsumedRead/WriteCapacityUnits per table to CloudWatch for free, and a log line per
 * request would cost more to ingest than the request itself.
 */

/** The item operations, by the client's and the DocumentClient's command names. */
const ITEM_COMMANDS = new Set(
  ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'BatchWriteItem']
    .concat(['TransactGetItems', 'TransactWriteItems', 'ExecuteStatement'])
    .concat(['Get', 'Put', 'Update', 'Delete', 'BatchGet', 'BatchWrite', 'TransactGet', 'TransactWrite'])
    .map((name) => `${name}Command`),
);

const NAME = 'agenthostReturnConsumedCapacity';

/** Adds the request parameter to every item command `client` sends (once, however often called). */
export function askConsumedCapacity(client: DynamoDBClient): void {
  if (client.middlewareStack.identify().some((entry) => entry.startsWith(NAME))) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      if (ITEM_COMMANDS.has(String(context.commandName)) && input.ReturnConsumedCapacity === undefined)
        input.ReturnConsumedCapacity = 'TOTAL';
      return next(args);
    },
    { step: 'initialize', name: NAME },
  );
}
