import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  EXIT_MARGIN_MS,
  type RunnerRecord,
  WarmRunnerPool,
} from '../../functions/adapters/aws/warm-runner-pool.ts';
import { RUNNER_PROTOCOL } from '../../functions/containers/sandbox-protocol.ts';
import {
  DYNAMODB_LOCAL_CREDENTIALS,
  DYNAMODB_LOCAL_REGION,
} from '../../functions/emulator/dynamodb-local.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../helpers/dynamodb-local.ts';

/**
 * The warm runner pool's records on DynamoDB Local, the engine the deployment's
 * table runs on: a claim is atomic (runs racing for the same runners each get a different one, or
 * none), a runner bound to one workspace and agent version is never claimed for another, a runner
 * near the end of its idle time is not claimed, and the pool's deficit keeps the floor within the
 * ceiling.
 */

const alpha = { workspaceId: 'ws_alpha', agentVersion: 'agv_1' };
const bravo = { workspaceId: 'ws_bravo', agentVersion: 'agv_1' };

describe('the warm runner pool on DynamoDB Local', () => {
  let dynamo: DynamoDbLocal;
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  const now = 1_800_000_000_000;
  let pool: WarmRunnerPool;
  let n = 0;

  before(async () => {
    dynamo = await startDynamoDbLocal('agenthost-pool');
    client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: DYNAMODB_LOCAL_REGION,
      credentials: DYNAMODB_LOCAL_CREDENTIALS,
    });
    doc = DynamoDBDocumentClient.from(client);
  });
  after(async () => {
    client?.destroy();
    await dynamo?.close();
  });
  beforeEach(async () => {
    pool = new WarmRunnerPool({ doc, tableName: dynamo.tableName, floor: 2, ceiling: 5, now: () => now });
    for (const r of await pool.list()) await pool.remove(r);
  });

  const runner = (extra: Partial<RunnerRecord> = {}): RunnerRecord => {
    const id = `r${++n}`;
    return {
      runnerId: id,
      taskArn: `arn:aws:ecs:us-east-1:000000000000:task/sandbox/${id}`,
      binding: '',
      status: 'idle',
      nextClaim: 1,
      claimSlots: 10,
      usableUntil: now + 600_000,
      startedAt: now,
      protocol: RUNNER_PROTOCOL,
      ...extra,
    };
  };

  test('a claim binds an unbound runner; after release the same pair claims it again, another pair never', async () => {
    const r = runner();
    await pool.add(r);
    const first = await pool.claim(alpha);
    assert.equal(first?.record.runnerId, r.runnerId);
    assert.equal(first?.slot, 1);
    assert.equal(first?.record.binding, 'ws_alpha|agv_1');
    assert.equal(await pool.claim(alpha), undefined, 'busy: not claimed twice');
    assert.equal(await pool.release(first, now + 300_000), true);
    assert.equal(await pool.claim(bravo), undefined, 'bound to alpha: bravo does not get it');
    assert.equal(await pool.claim({ ...alpha, agentVersion: 'agv_2' }), undefined, 'nor another version');
    const again = await pool.claim(alpha);
    assert.equal(again?.record.runnerId, r.runnerId);
    assert.equal(again?.slot, 2, 'the next claim slot');
  });

  test('a runner bound to the pair is preferred to an unbound one, and the oldest unbound first', async () => {
    const older = runner({ startedAt: now - 5000 });
    const newer = runner();
    const bound = runner({ binding: 'ws_alpha|agv_1', nextClaim: 3, startedAt: now - 60_000 });
    await pool.add(newer);
    await pool.add(older);
    await pool.add(bound);
    assert.equal((await pool.claim(alpha))?.record.runnerId, bound.runnerId);
    assert.equal((await pool.claim(bravo))?.record.runnerId, older.runnerId);
    assert.equal((await pool.claim(bravo))?.record.runnerId, newer.runnerId);
  });

  test('runs racing for the pool: each runner goes to exactly one claim', async () => {
    const runners = [runner(), runner(), runner()];
    for (const r of runners) await pool.add(r);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => pool.claim(i % 2 ? alpha : { ...bravo, workspaceId: `ws_${i}` })),
    );
    const won = claims.filter((c) => c !== undefined).map((c) => c.record.runnerId);
    assert.equal(won.length, 3, `three runners, three claims won: ${won}`);
    assert.deepEqual([...won].sort(), runners.map((r) => r.runnerId).sort(), 'each runner once');
    for (const r of await pool.list()) assert.equal(r.status, 'busy');
  });

  test('a runner near the end of its idle time is not claimed; one past it and its exit is forgotten', async () => {
    const closing = runner({ usableUntil: now + 5000 });
    const exiting = runner({ usableUntil: now - 1 });
    const gone = runner({ usableUntil: now - EXIT_MARGIN_MS - 1 });
    await pool.add(closing);
    await pool.add(exiting);
    await pool.add(gone);
    assert.equal(await pool.claim(alpha), undefined);
    assert.deepEqual(
      (await pool.list()).map((r) => r.runnerId).sort(),
      [closing.runnerId, exiting.runnerId].sort(),
      'one whose task may still be exiting still holds its slot',
    );
  });

  test('a runner whose last slot was used, or that would not wait long enough, is not released: it counts until it is stopped', async () => {
    await pool.add(runner({ claimSlots: 1 }));
    const last = await pool.claim(alpha);
    assert.ok(last);
    assert.equal(await pool.release(last, now + 300_000), false, 'no claim slot left');
    await pool.add(runner());
    const short = await pool.claim(alpha);
    assert.ok(short);
    assert.equal(await pool.release(short, now + 1000), false, 'about to exit');
    assert.equal(await pool.claim(alpha), undefined);
    assert.deepEqual(
      (await pool.list()).map((r) => r.status),
      ['busy', 'busy'],
      'both still count against the ceiling',
    );
    await pool.remove(last.record);
    await pool.remove(short.record);
    assert.deepEqual(await pool.list(), [], 'once their tasks are stopped, their slots are free');
  });

  test('every task holds a slot: runners started for claims count, and starts racing past the ceiling are refused', async () => {
    const small = new WarmRunnerPool({
      doc,
      tableName: dynamo.tableName,
      floor: 1,
      ceiling: 3,
      now: () => now,
    });
    const added = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        small.add(runner({ status: 'busy', binding: `ws_${i}|agv_1`, nextClaim: 2, taskArn: '' })),
      ),
    );
    const won = added.filter((r) => r !== undefined);
    assert.equal(won.length, 3, 'three slots, three starts');
    assert.deepEqual(won.map((r) => r.slot).sort(), [0, 1, 2]);
    assert.equal(await small.deficit(), 0, 'no room for the floor either');
    assert.equal(await small.add(runner()), undefined);
    await small.remove(won[0] as RunnerRecord);
    assert.ok(await small.add(runner()), 'a removed runner frees its slot');
  });

  test('a removed runner frees only its own slot, never a runner that took the slot since', async () => {
    const first = await pool.add(runner({ usableUntil: now - EXIT_MARGIN_MS - 1 }));
    assert.ok(first);
    const second = await pool.add(runner());
    assert.equal(second?.slot, first.slot, 'the slot of an exited runner is taken again');
    await pool.remove(first);
    assert.deepEqual(
      (await pool.list()).map((r) => r.runnerId),
      [second?.runnerId],
    );
  });

  test('eviction takes an idle runner the run cannot use, bound elsewhere first; never a busy one or its own pair', async () => {
    const mine = await pool.add(runner({ binding: 'ws_alpha|agv_1', nextClaim: 2 }));
    const busy = await pool.add(runner({ binding: 'ws_bravo|agv_1', status: 'busy', nextClaim: 2 }));
    const unbound = await pool.add(runner());
    const other = await pool.add(runner({ binding: 'ws_bravo|agv_2', nextClaim: 2 }));
    assert.ok(mine && busy && unbound && other);
    const size = { cpu: 256, memory: 1024 };
    assert.equal((await pool.evict(alpha, size))?.runnerId, other.runnerId);
    assert.equal(
      (await pool.list()).find((r) => r.runnerId === other.runnerId)?.status,
      'busy',
      'taken out of the pool, and still counted until its task is stopped',
    );
    await pool.remove(other);
    assert.equal(
      await pool.evict(alpha, size),
      undefined,
      'an unbound runner that fits is claimed, not evicted',
    );
    assert.equal(
      (await pool.evict(alpha, { cpu: 1024, memory: 2048 }))?.runnerId,
      unbound.runnerId,
      'one too small for the run is',
    );
    await pool.remove(unbound);
    assert.deepEqual(
      (await pool.list()).map((r) => r.runnerId).sort(),
      [mine.runnerId, busy.runnerId].sort(),
    );
  });

  test('an unbound runner is claimed only by a run it is large enough for', async () => {
    await pool.add(runner());
    assert.equal(await pool.claim(alpha, { cpu: 1024, memory: 2048 }), undefined);
    assert.ok(await pool.claim(alpha, { cpu: 256, memory: 512 }));
  });

  test('a runner of an earlier protocol (started before a deploy) is never claimed, counts for no floor, and is stopped for room, even for its own pair', async () => {
    const { protocol: _, ...before } = runner();
    const old = await pool.add(before);
    const older = await pool.add(runner({ protocol: RUNNER_PROTOCOL - 1, binding: 'ws_alpha|agv_1' }));
    assert.ok(old && older);
    assert.equal(await pool.claim(alpha), undefined, 'neither is claimed, bound to the pair or not');
    assert.equal(await pool.deficit(), 2, 'the floor is started anew beside them');
    const size = { cpu: 256, memory: 1024 };
    const first = await pool.evict(alpha, size);
    const second = await pool.evict(alpha, size);
    assert.deepEqual(
      [first?.runnerId, second?.runnerId].sort(),
      [old.runnerId, older.runnerId].sort(),
      'both are stopped to make room, its own pair’s too',
    );
    const current = await pool.add(runner());
    assert.equal((await pool.claim(alpha))?.record.runnerId, current?.runnerId);
  });

  test("a pair's calls: the gaps between its last three, latest first", async () => {
    let t = now;
    const clocked = new WarmRunnerPool({
      doc,
      tableName: dynamo.tableName,
      floor: 2,
      ceiling: 5,
      now: () => t,
    });
    const pair = { workspaceId: `ws_${Date.now()}`, agentVersion: 'agv_1' };
    assert.deepEqual(await clocked.recordCall(pair), [-1, -1], 'the first call: none known');
    t += 30_000;
    assert.deepEqual(await clocked.recordCall(pair), [30_000, -1]);
    t += 45_000;
    assert.deepEqual(await clocked.recordCall(pair), [45_000, 30_000]);
  });

  test('the deficit fills the floor of unbound idle runners, within the ceiling', async () => {
    assert.equal(await pool.deficit(), 2, 'empty: start the floor');
    await pool.add(runner());
    assert.equal(await pool.deficit(), 1);
    await pool.add(runner({ binding: 'ws_alpha|agv_1' }));
    await pool.add(runner({ status: 'busy', binding: 'ws_bravo|agv_1' }));
    await pool.add(runner({ status: 'busy', binding: 'ws_bravo|agv_1' }));
    assert.equal(await pool.deficit(), 1, 'bound runners do not count toward the floor');
    await pool.add(runner({ status: 'busy', binding: 'ws_bravo|agv_1' }));
    assert.equal(await pool.deficit(), 0, 'five runners: the ceiling');
  });
});
