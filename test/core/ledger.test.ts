import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAccount } from '../../functions/core/accounts/account.ts';
import {
  charge,
  getBalance,
  ledgerKeys,
  listEntries,
  reconcileCharges,
  refund,
  settleOp,
  topUp,
} from '../../functions/core/billing/ledger.ts';
import { StoreBusyError } from '../../functions/ports/store.ts';
import {
  errorOf as _errorOf,
  BACKENDS_WITH_FAULTS,
  startTestPlatform,
  type TestPlatform,
} from '../helpers/platform.ts';

void _errorOf;

const chargeOf = (accountId: string, requestId: string, amount = 1) => ({
  accountId,
  amount,
  requestId,
  agent: 'seller/paid/v1',
  authorWorkspaceId: 'ws-author',
  deadlineMs: Date.now() + 30_000,
});

for (const backend of BACKENDS_WITH_FAULTS) {
  describe(`credit ledger (${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p.close());

    /**
     * A charge sent again, with its request id, while the store answers busy (503: nothing was
     * changed, retry): under the injected refusals and a loaded machine, one of a hundred racing
     * charges can outlast the store's retry budget, and its client's answer is to come back.
     */
    const chargeAsAClientWould = async (request: ReturnType<typeof chargeOf>): Promise<boolean> => {
      for (;;) {
        try {
          return await charge(p.deps, request);
        } catch (err) {
          if (!(err instanceof StoreBusyError)) throw err;
        }
      }
    };

    const sumOfEntries = async (accountId: string) =>
      (await listEntries(p.deps, accountId)).reduce((sum, e) => sum + e.amount, 0);

    it('100 parallel charges against a balance that covers 10 succeed exactly 10 times', async (t) => {
      const a = await createAccount(p.deps, { org: `race-${backend}`, tier: 'pro' });
      const id = a.account.id;
      assert.equal(await topUp(p.deps, id, 10, `pay-race-${backend}`), true);
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) => chargeAsAClientWould(chargeOf(id, `req-race-${backend}-${i}`))),
      );
      const ok = results.filter((r) => r.status === 'fulfilled' && r.value === true).length;
      const refused = results.filter(
        (r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'INSUFFICIENT_CREDITS',
      ).length;
      t.diagnostic(
        `100 parallel charges of 1 credit against 10: ${ok} succeeded, ${refused} refused with 402`,
      );
      assert.equal(ok, 10);
      assert.equal(refused, 90);
      assert.equal(await getBalance(p.deps, id), 0);
      assert.equal(await sumOfEntries(id), 0);
    });

    it('a charge is recorded once per request id; a top-up once per payment; a refund once', async () => {
      const a = await createAccount(p.deps, { org: `idem-${backend}`, tier: 'pro' });
      const id = a.account.id;
      assert.equal(await topUp(p.deps, id, 50, `pay-idem-${backend}`), true);
      assert.equal(
        await topUp(p.deps, id, 50, `pay-idem-${backend}`),
        false,
        'a replayed payment lands once',
      );
      const charges = await Promise.all(
        Array.from({ length: 10 }, () => charge(p.deps, chargeOf(id, `req-idem-${backend}`, 7))),
      );
      assert.equal(charges.filter(Boolean).length, 1);
      assert.equal(await getBalance(p.deps, id), 43);
      const refunds = await Promise.all(
        Array.from({ length: 5 }, () => refund(p.deps, `req-idem-${backend}`, 'test')),
      );
      assert.equal(refunds.filter(Boolean).length, 1);
      assert.equal(await getBalance(p.deps, id), 50);
      assert.equal(await sumOfEntries(id), 50);
      const entries = await listEntries(p.deps, id);
      assert.deepEqual(entries.map((e) => e.type).sort(), ['charge', 'refund', 'topup']);
    });

    it('reconciliation refunds a charge whose call never completed, once, and never a settled one', async () => {
      const a = await createAccount(p.deps, { org: `recon-${backend}`, tier: 'pro' });
      const id = a.account.id;
      await topUp(p.deps, id, 20, `pay-recon-${backend}`);
      const past = { deadlineMs: p.clock.now().getTime() - 120_000 };
      // Killed between charge and run: no record, no answer.
      await charge(p.deps, { ...chargeOf(id, `req-killed-${backend}`, 5), ...past });
      // Killed between a failed run and its refund: the same state.
      await charge(p.deps, { ...chargeOf(id, `req-failed-${backend}`, 3), ...past });
      // Completed: settled with its record.
      await charge(p.deps, { ...chargeOf(id, `req-done-${backend}`, 4), ...past });
      await p.deps.store.transactWrite([settleOp(`req-done-${backend}`)]);
      assert.equal(await getBalance(p.deps, id), 8);
      const first = await reconcileCharges(p.deps);
      const second = await reconcileCharges(p.deps);
      assert.ok(first.refunded >= 2);
      assert.equal(second.refunded, 0);
      assert.equal(
        await getBalance(p.deps, id),
        16,
        'both unfinished calls refunded, the completed one billed',
      );
      assert.equal(await sumOfEntries(id), 16);
      const guard = await p.deps.store.get(ledgerKeys.guard('charge', `req-done-${backend}`));
      assert.equal(guard?.state, 'settled');
    });
  });
}

describe('credit ledger: random interleavings (fast-check)', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('keeps balance = sum of entries, never negative, at most one entry per charge id', async (t) => {
    let runs = 0;
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('topup' as const),
        ref: fc.integer({ min: 0, max: 5 }),
        amount: fc.integer({ min: 1, max: 20 }),
      }),
      fc.record({
        kind: fc.constant('charge' as const),
        ref: fc.integer({ min: 0, max: 8 }),
        amount: fc.integer({ min: 1, max: 15 }),
      }),
      fc.record({
        kind: fc.constant('refund' as const),
        ref: fc.integer({ min: 0, max: 8 }),
        amount: fc.constant(0),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        async (batches) => {
          runs++;
          const a = await createAccount(p.deps, { org: `prop-${runs}`, tier: 'pro' });
          const id = a.account.id;
          const tag = `${runs}-${a.account.id.slice(0, 8)}`;
          for (const batch of batches) {
            // Each batch runs concurrently: interleavings, duplicates and races.
            await Promise.allSettled(
              batch.map((o) => {
                if (o.kind === 'topup') return topUp(p.deps, id, o.amount, `pay-${tag}-${o.ref}`);
                if (o.kind === 'charge') return charge(p.deps, chargeOf(id, `req-${tag}-${o.ref}`, o.amount));
                return refund(p.deps, `req-${tag}-${o.ref}`, 'prop');
              }),
            );
            const balance = await getBalance(p.deps, id);
            if (balance < 0) return false;
          }
          const entries = await listEntries(p.deps, id);
          const sum = entries.reduce((s, e) => s + e.amount, 0);
          const charges = entries.filter((e) => e.type === 'charge').map((e) => e.reference);
          const refunds = entries.filter((e) => e.type === 'refund').map((e) => e.reference);
          const topups = entries.filter((e) => e.type === 'topup').map((e) => e.reference);
          return (
            sum === (await getBalance(p.deps, id)) &&
            new Set(charges).size === charges.length &&
            new Set(refunds).size === refunds.length &&
            new Set(topups).size === topups.length &&
            refunds.every((r) => charges.includes(r))
          );
        },
      ),
      { numRuns: 40, seed: 20261122 },
    );
    t.diagnostic(
      `${runs} random interleavings: balance = sum of entries, never negative, one entry per reference`,
    );
  });
});
