/**
 * The concurrency slots of functions/core/calls/quotas.ts on both stores (SQLite, and DynamoDB
 * through DynamoDB Local, AWS's own engine): exact under racing admissions, a crashed call's slot
 * freed when its lease expires, and a finished call's slot free for the previous versions'
 * protocol too (create-if-absent, delete on release), which a rollback or the Lambdas of a deploy
 * in progress still run. The daily quota is exact under the same races. On DynamoDB, also behind
 * the fault injector (helpers/dynamodb-faults.ts): a conflict or a throttle is never a used-up
 * quota or a held slot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import type { AuthContext } from '../../functions/core/api-keys/api-keys.ts';
import { admitCall } from '../../functions/core/calls/quotas.ts';
import { dailyCounterKeys, utcDay } from '../../functions/core/usage/daily-usage.ts';
import type { CoreDeps } from '../../functions/ports/core-deps.ts';
import { cond, type Store } from '../../functions/ports/store.ts';
import {
  dynamoDbLocalBackend,
  faultyDynamoDbLocalBackend,
  type StoreBackend,
  sqliteBackend,
} from '../helpers/store-backends.ts';

const backends: [string, () => Promise<StoreBackend>][] = [
  ['SQLite', sqliteBackend],
  ['DynamoDB Local', () => dynamoDbLocalBackend('agenthost-slots')],
  // As the service answers racing transactions: some cancelled with TransactionConflict, some throttled.
  ['DynamoDB Local with faults', () => faultyDynamoDbLocalBackend('agenthost-slots-faults')],
];

const C = TIER_LIMITS.free.concurrentRequests;

for (const [name, start] of backends) {
  describe(`concurrency slots on ${name}`, () => {
    let backend: StoreBackend;
    let nowMs = Date.parse('2026-06-01T10:00:00Z');
    let store: Store;
    let deps: CoreDeps;
    let accounts = 0;
    const caller = (): AuthContext => ({
      accountId: `slots-${process.pid}-${++accounts}`,
      org: 'slots',
      tier: 'free',
      personalWorkspaceId: 'ws',
      keyId: 'k',
      agent: null,
    });
    const slotKey = (auth: AuthContext, n: number) => ({ pk: `ACCOUNT#${auth.accountId}`, sk: `LEASE#${n}` });
    const deadline = () => nowMs + 1_000;

    before(async () => {
      backend = await start();
      store = backend.open(() => Math.floor(nowMs / 1000));
      deps = { store, clock: { now: () => new Date(nowMs) } } as unknown as CoreDeps;
    });
    after(async () => {
      await (store as { close?: () => Promise<void> }).close?.();
      await backend.close();
    });

    it('admits exactly C of 3C racing calls, and C again once they finish', async () => {
      const auth = caller();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 3 * C }, () => admitCall(deps, auth, deadline())),
      );
      const admitted = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
      assert.equal(admitted.length, C);
      for (const o of outcomes)
        if (o.status === 'rejected') assert.match(String(o.reason), /concurrent requests/);
      await Promise.all(admitted.map((a) => a.finish([])));
      const again = await Promise.all(Array.from({ length: C }, () => admitCall(deps, auth, deadline())));
      await assert.rejects(admitCall(deps, auth, deadline()), /concurrent requests/);
      await Promise.all(again.map((a) => a.finish([])));
    });

    it('admits all of C racing calls when C remain of the daily quota, and the next is refused as used up', async () => {
      const auth = caller();
      const limit = TIER_LIMITS.free.dailyCalls;
      const counter = dailyCounterKeys.calls(auth.accountId, utcDay(new Date(nowMs)));
      // Rounds, so that with faults some racing admission surely meets a conflict on the counter.
      for (let round = 0; round < 3; round++) {
        await store.put({ ...counter, calls: limit - C });
        const admitted = await Promise.all(
          Array.from({ length: C }, () => admitCall(deps, auth, deadline())),
        );
        assert.equal((await store.get(counter))?.calls, limit);
        await assert.rejects(admitCall(deps, auth, deadline()), /Daily quota of \d+ calls .* is used up/);
        await Promise.all(admitted.map((a) => a.finish([])));
      }
      if (backend.faults)
        assert.ok(
          backend.faults.writeConflicts + backend.faults.throttles > 0,
          'the injector refused some of the writes',
        );
    });

    it('frees a crashed call’s slot once its lease (deadline + 30 s) has passed', async () => {
      const auth = caller();
      for (let i = 0; i < C; i++) await admitCall(deps, auth, deadline()); // never finished
      await assert.rejects(admitCall(deps, auth, deadline()), /concurrent requests/);
      nowMs += 30_000; // the deadline was a second away: its lease has a second to go
      await assert.rejects(admitCall(deps, auth, deadline()), /concurrent requests/);
      nowMs += 1_000;
      await (await admitCall(deps, auth, deadline())).finish([]);
    });

    it('leaves every finished call’s slot free for the previous versions’ create-if-absent', async () => {
      const auth = caller();
      const held = await Promise.all(Array.from({ length: C }, () => admitCall(deps, auth, deadline())));
      await Promise.all(held.map((a) => a.finish([])));
      // The previous versions' admission and release, as they are written.
      const ttl = Math.ceil(deadline() / 1000) + 30;
      for (let n = 0; n < C; n++)
        await store.put({ ...slotKey(auth, n), lease_id: `old-${n}`, ttl }, { condition: cond.notExists() });
      await assert.rejects(admitCall(deps, auth, deadline()), /concurrent requests/);
      await store.delete(slotKey(auth, 4), { condition: cond.eq('lease_id', 'old-4') });
      await (await admitCall(deps, auth, deadline())).finish([]);
    });
  });
}
