import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../functions/core/api-keys/api-keys.ts';
import {
  admitAddress,
  countIfUncounted,
  KeylessReads,
  refuseCounted,
} from '../../functions/edge/address-admission.ts';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import { KEYLESS_BODY_READS_PER_ADDRESS } from '../../functions/edge/keyless-bodies.ts';
import type { Deps } from '../../functions/platform/deps.ts';
import { type OperationId, routes } from '../../functions/platform/routes.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The requests no API key vouches for (functions/edge/address-admission.ts): each counts once
 * against its address's per-minute limit before anything else; a route with a credential in its
 * path has it checked before its body; the other keyless routes that take a body read a few at once
 * per address.
 */

const LIMIT = 2 * KEYLESS_BODY_READS_PER_ADDRESS;

/** A 429 of `name`'s quota. */
const quota = (name: string) => (err: unknown) =>
  err instanceof PlatformError && err.code === 'RATE_LIMITED' && err.details?.quota === name;

describe('address admission (edge unit)', () => {
  let p: TestPlatform;
  let n = 0;
  before(async () => {
    p = await startTestPlatform(
      { PLATFORM_ADDRESS_RATE_LIMIT: String(LIMIT) },
      'sqlite',
      {},
      { inMemory: true },
    );
  });
  after(() => p.close());

  /** A scope of a request from an address of its own (or `address`), on route `id`. */
  function scopeOf(
    id: OperationId = 'health',
    address = `203.0.113.${++n}`,
    deps: Deps = p.deps,
  ): RequestScope {
    return {
      requestId: 'req_addr',
      address,
      origin: undefined,
      deps,
      waitUntil: () => {},
      route: { id, def: routes[id] },
    };
  }

  it('admits the limit’s last request and refuses the next with 429, quota address, counting each once', async () => {
    const address = '203.0.113.200';
    for (let i = 1; i < LIMIT; i++) await admitAddress(scopeOf('health', address));
    const last = scopeOf('health', address);
    await admitAddress(last);
    await admitAddress(last); // the same request again: not counted twice
    assert.deepEqual(last.addressAdmission?.state.remaining, 0);
    const over = scopeOf('health', address);
    const err = await admitAddress(over).then(
      () => assert.fail('admitted past the limit'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PlatformError);
    assert.equal(err.code, 'RATE_LIMITED');
    const reset = Math.floor(p.clock.now().getTime() / 60_000) * 60 + 60;
    assert.deepEqual(err.details, {
      suggested_wait_time: Math.max(1, Math.ceil(reset - p.clock.now().getTime() / 1000)),
      limit: LIMIT,
      reset,
      quota: 'address',
    });
    assert.equal(over.addressAdmission?.refused, true, 'the refused request is counted too');
    await admitAddress(scopeOf()); // another address has its own count
  });

  it('refuseCounted throws its refusal, not the 429, with the request counted', async () => {
    const address = '203.0.113.201';
    const tooLarge = new PlatformError('DOCUMENT_TOO_LARGE', 'too large');
    for (let i = 0; i <= LIMIT; i++) {
      const scope = scopeOf('health', address);
      await assert.rejects(refuseCounted(scope, tooLarge), (e) => e === tooLarge);
      await assert.rejects(refuseCounted(scope, tooLarge), (e) => e === tooLarge); // counted once
      assert.equal(scope.addressAdmission?.state.remaining, Math.max(0, LIMIT - i - 1));
    }
  });

  it('countIfUncounted counts a request nothing counted, and only such a request', async () => {
    const address = '203.0.113.202';
    const uncounted = scopeOf('health', address);
    await countIfUncounted(uncounted);
    assert.equal(uncounted.addressAdmission?.state.remaining, LIMIT - 1);
    await countIfUncounted(uncounted);
    const { key } = await p.createAccount('addressco');
    const keyed = { ...scopeOf('health', address), auth: await authenticate(p.deps, `Bearer ${key}`) };
    await countIfUncounted(keyed);
    assert.equal(keyed.addressAdmission, undefined, 'a keyed request is its account’s');
    const next = scopeOf('health', address);
    await admitAddress(next);
    assert.equal(next.addressAdmission?.state.remaining, LIMIT - 2, 'two counts in all');
  });

  it('countIfUncounted leaves a request uncounted, and its answer unchanged, when the count fails', async () => {
    const store = new Proxy(p.deps.store, {
      get: (target, name, receiver) =>
        name === 'atomicAdd'
          ? () => Promise.reject(new Error('store down'))
          : Reflect.get(target, name, receiver),
    });
    const scope = scopeOf('health', undefined, { ...p.deps, store });
    await countIfUncounted(scope);
    assert.equal(scope.addressAdmission, undefined);
  });

  it('checks a path credential before the body, and takes no read for it', async () => {
    const seen: Record<string, string>[] = [];
    const reads = new KeylessReads({
      triggerWebhook: async (deps, params) => {
        assert.equal(deps, p.deps);
        seen.push(params);
        if (params.webhook_secret !== 'good') throw new PlatformError('NOT_FOUND', 'No such webhook');
      },
    });
    const address = '203.0.113.203';
    const params = { schedule_id: 's1', webhook_secret: 'wrong' };
    await assert.rejects(reads.admit(scopeOf('triggerWebhook', address), params, true), {
      code: 'NOT_FOUND',
    });
    // More than the address's reads at once: a checked route holds none.
    for (let i = 1; i < LIMIT; i++)
      assert.equal(
        await reads.admit(scopeOf('triggerWebhook', address), { ...params, webhook_secret: 'good' }, true),
        undefined,
      );
    assert.equal(seen.length, LIMIT);
    // Past the address's limit the count refuses first: the check is not asked.
    await assert.rejects(reads.admit(scopeOf('triggerWebhook', address), params, true), quota('address'));
    assert.equal(seen.length, LIMIT);
  });

  it('holds the address’s reads of bodies with no credential first; a read given back frees a place', async () => {
    const reads = new KeylessReads({});
    const address = '203.0.113.204';
    assert.equal(await reads.admit(scopeOf('health', address), {}, false), undefined, 'no body, no read');
    const held = [];
    for (let i = 0; i < KEYLESS_BODY_READS_PER_ADDRESS; i++)
      held.push(await reads.admit(scopeOf('paymentWebhook', address), {}, true));
    await assert.rejects(reads.admit(scopeOf('paymentWebhook', address), {}, true), quota('keyless_bodies'));
    assert.equal(
      typeof (await reads.admit(scopeOf('paymentWebhook'), {}, true)),
      'function',
      'another address',
    );
    held[0]?.();
    assert.equal(typeof (await reads.admit(scopeOf('paymentWebhook', address), {}, true)), 'function');
  });
});
