import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('quotas and concurrency (exact under races)', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  before(async () => {
    fake = await startFakeLlm({ record: false });
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('admits exactly Q of 2Q parallel calls against a daily quota of Q, with 429, reset and Retry-After', async () => {
    // Pro: its 50 concurrent requests are more than the 40 raced here, so only the daily quota
    // refuses (on a loaded machine, free's 10 would refuse some for concurrency first).
    const acct = await createAccount(p.deps, { org: 'quota-pro', tier: 'pro' });
    await p.request('POST', '/agents', {
      key: acct.api_key,
      body: { name: 'echo', description: 'echo', supported_providers: ['openai'], prompt_template: 'hi' },
    });
    const q = TIER_LIMITS.pro.dailyCalls;
    // Use up all but 20 of the quota directly, then race 40 calls for the last 20.
    const { incrementDailyCalls } = await import('../../functions/core/usage/daily-usage.ts');
    await incrementDailyCalls(p.deps, acct.account.id, q - 20);
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        p.request('POST', '/quota-pro/echo/v1/run', { key: acct.api_key, body: {} }),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    assert.equal(ok, 20);
    assert.equal(limited.length, 20);
    const err = limited[0] as (typeof limited)[number];
    const body = err.body as {
      error: { code: string; message: string; suggested_wait_time: number; is_retryable: boolean };
    };
    assert.equal(body.error.code, 'RATE_LIMITED');
    assert.equal(body.error.is_retryable, true);
    assert.match(body.error.message, /resets at \d{4}-\d{2}-\d{2}T00:00:00/);
    assert.ok(body.error.suggested_wait_time > 0);
    assert.equal(err.headers.get('retry-after'), String(body.error.suggested_wait_time));
    assert.equal(err.headers.get('x-ratelimit-remaining'), '0');
  });

  it('never runs more than C slow calls at once at a concurrency of C, and frees every slot', async () => {
    const acct = await createAccount(p.deps, { org: 'conc-free', tier: 'free' });
    await p.request('POST', '/agents', {
      key: acct.api_key,
      body: { name: 'slow', description: 'slow', supported_providers: ['openai'], prompt_template: 'hi' },
    });
    const c = TIER_LIMITS.free.concurrentRequests;
    let running = 0;
    let peak = 0;
    fake.setResponder(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 150));
      running--;
      return { text: 'done' };
    });
    const results = await Promise.all(
      Array.from({ length: 5 * c }, () =>
        p.request('POST', '/conc-free/slow/v1/run', { key: acct.api_key, body: {} }),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    assert.ok(peak <= c, `peak ${peak} ≤ ${c}`);
    assert.ok(ok >= c, `at least ${c} ran (${ok})`);
    assert.equal(ok + results.filter((r) => r.status === 429).length, 5 * c);
    const after = await p.request('POST', '/conc-free/slow/v1/run', { key: acct.api_key, body: {} });
    assert.equal(after.status, 200, 'every slot was released');
    fake.setResponder(undefined);
  });

  it('finds a free slot at the first try while this process’s calls hold the others', async () => {
    const acct = await createAccount(p.deps, { org: 'slots-pro', tier: 'pro' });
    const { admitCall } = await import('../../functions/core/calls/quotas.ts');
    const { heldSlots } = await import('../../functions/core/calls/held-slots.ts');
    const { authenticate } = await import('../../functions/core/api-keys/api-keys.ts');
    const auth = await authenticate(p.deps, `Bearer ${acct.api_key}`);
    // The admission's and the finish's writes (Store.writeEach, one commit locally).
    let attempts = 0;
    const store = p.deps.store;
    const counted = {
      ...p.deps,
      store: Object.assign(Object.create(store) as typeof store, {
        writeEach: (ops: Parameters<typeof store.writeEach>[0]) => {
          attempts++;
          return store.writeEach(ops);
        },
      }),
    };
    const c = TIER_LIMITS.pro.concurrentRequests;
    const deadline = p.clock.now().getTime() + 60_000;
    // Every slot, one call after another, none released: each admission takes one slot at its first
    // try (a search from a random slot would try held ones, one writeEach each).
    const admissions = [];
    for (let i = 0; i < c; i++) admissions.push(await admitCall(counted, auth, deadline));
    assert.equal(attempts, c);
    assert.equal(heldSlots.heldBy(acct.account.id), c);
    await assert.rejects(admitCall(counted, auth, deadline), /concurrent requests/);
    // Another tenant is not affected: the hint is per account, and its first try succeeds.
    const other = await createAccount(p.deps, { org: 'slots-other', tier: 'pro' });
    const otherAuth = await authenticate(p.deps, `Bearer ${other.api_key}`);
    attempts = 0;
    await (await admitCall(counted, otherAuth, deadline)).finish([]);
    assert.equal(attempts, 2, "another account's admission and finish: one writeEach each");
    assert.equal(heldSlots.heldBy(other.account.id), 0);
    for (const a of admissions) await a.finish([]);
    assert.equal(heldSlots.heldBy(acct.account.id), 0, 'every slot released');
    attempts = 0;
    await (await admitCall(counted, auth, deadline)).finish([]);
    assert.equal(attempts, 2, 'one writeEach to admit, one to finish');
  });

  it('frees a crashed call’s slot when its lease expires', async () => {
    const acct = await createAccount(p.deps, { org: 'lease-free', tier: 'free' });
    const { admitCall } = await import('../../functions/core/calls/quotas.ts');
    const { authenticate } = await import('../../functions/core/api-keys/api-keys.ts');
    const auth = await authenticate(p.deps, `Bearer ${acct.api_key}`);
    const deadline = p.clock.now().getTime() + 1_000;
    // A "crashed" process: takes every slot and never releases.
    for (let i = 0; i < TIER_LIMITS.free.concurrentRequests; i++) await admitCall(p.deps, auth, deadline);
    await assert.rejects(admitCall(p.deps, auth, deadline), /concurrent requests/);
    p.clock.advance(60_000);
    const admitted = await admitCall(p.deps, auth, p.clock.now().getTime() + 1_000);
    await admitted.finish([]);
  });

  it('frees a finished call’s slot by expiring it, which the previous version’s admission takes as absent', async () => {
    const acct = await createAccount(p.deps, { org: 'lease-expired', tier: 'free' });
    const { admitCall } = await import('../../functions/core/calls/quotas.ts');
    const { authenticate } = await import('../../functions/core/api-keys/api-keys.ts');
    const { cond } = await import('../../functions/ports/store.ts');
    const auth = await authenticate(p.deps, `Bearer ${acct.api_key}`);
    const slotKey = (n: number) => ({ pk: `ACCOUNT#${acct.account.id}`, sk: `LEASE#${n}` });
    const slots = () =>
      p.deps.store.query({ pk: `ACCOUNT#${acct.account.id}`, sk: { beginsWith: 'LEASE#' } });
    const deadline = p.clock.now().getTime() + 1_000;
    const c = TIER_LIMITS.free.concurrentRequests;
    const admitted = [];
    for (let i = 0; i < c; i++) admitted.push(await admitCall(p.deps, auth, deadline));
    const held = (await slots()).items;
    assert.equal(held.length, c);
    for (const h of held) {
      assert.equal(typeof h.lease_id, 'string');
      assert.equal(h.ttl, Math.ceil(deadline / 1000) + 30);
    }
    for (const a of admitted) await a.finish([]);
    assert.deepEqual((await slots()).items, [], 'a released slot is absent to every read, as if deleted');
    // The previous version (until this change) took a slot with a create conditioned on its absence
    // and freed it with a delete: it still finds every slot free, and the next admission here
    // takes a slot it freed.
    for (let n = 0; n < c; n++) {
      await p.deps.store.put(
        { ...slotKey(n), lease_id: `old${n}`, ttl: Math.ceil(deadline / 1000) + 30 },
        {
          condition: cond.notExists(),
        },
      );
    }
    await assert.rejects(admitCall(p.deps, auth, deadline), /concurrent requests/);
    await p.deps.store.delete(slotKey(3), { condition: cond.eq('lease_id', 'old3') });
    await (await admitCall(p.deps, auth, deadline)).finish([]);
  });
});
