import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from './table-schema.ts';

/**
 * A (workspace, agent version) pair's recent calls, which its warm runner's idle wait follows
 * (runner-idle-wait.ts): the time of its last call and the two gaps before it, on the pair's own
 * item beside the pool's (`SANDBOX_PAIR#<workspace>|<agent version>`), expiring an hour after its
 * last call.
 */

/** How long a pair's traffic is remembered after its last call. */
const PAIR_TRAFFIC_TTL_SECONDS = 3600;

/**
 * Notes a call of the pair `pairKey` at `now` and answers its last two gaps between calls, latest
 * first (-1: none known). One UpdateItem that computes the gaps in place, so racing calls each see
 * a consistent history.
 */
export async function recordPairCall(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pairKey: string,
  now: number,
): Promise<number[]> {
  const out = await doc.send(
    new UpdateCommand({
      TableName: tableName,
      Key: { pk: `SANDBOX_PAIR#${pairKey}`, sk: 'TRAFFIC' },
      UpdateExpression:
        'SET gap2 = if_not_exists(gap1, :none), gap1 = :now - if_not_exists(lastCallAt, :never), lastCallAt = :now, #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TABLE_SCHEMA.ttlAttribute },
      ExpressionAttributeValues: {
        ':none': -1,
        // No call before: a negative gap, which stands for none.
        ':never': 2 * now,
        ':now': now,
        ':ttl': Math.ceil(now / 1000) + PAIR_TRAFFIC_TTL_SECONDS,
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const gap = (v: unknown) => (typeof v === 'number' && v >= 0 && v < now ? v : -1);
  return [gap(out.Attributes?.gap1), gap(out.Attributes?.gap2)];
}
