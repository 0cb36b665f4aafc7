import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticateKey, tryAuthenticate } from '../../functions/edge/authentication.ts';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import type { Deps } from '../../functions/platform/deps.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * Authentication of the routes an API key opens (functions/edge/authentication.ts): a good key
 * sets the caller; a missing or wrong one counts against the request's address, and past the
 * address's limit it is 429, not 401.
 */

const LIMIT = 3;

describe('authentication (edge unit)', () => {
  let p: TestPlatform;
  let key: string;
  let accountId: string;
  let n = 0;
  before(async () => {
    p = await startTestPlatform(
      { PLATFORM_ADDRESS_RATE_LIMIT: String(LIMIT) },
      'sqlite',
      {},
      { inMemory: true },
    );
    ({ key, accountId } = await p.createAccount('authco'));
  });
  after(() => p.close());

  function scopeOf(address = `192.0.2.${++n}`, deps: Deps = p.deps): RequestScope {
    return { requestId: 'req_auth', address, origin: undefined, deps, waitUntil: () => {} };
  }

  const refusal =
    (code: string, test: (err: PlatformError) => boolean = () => true) =>
    (err: unknown) =>
      err instanceof PlatformError && err.code === code && test(err);

  it('sets the caller of a good key, and counts nothing against the address', async () => {
    const scope = scopeOf();
    await authenticateKey(scope, `Bearer ${key}`, false);
    assert.equal(scope.auth?.accountId, accountId);
    assert.equal(scope.addressAdmission, undefined);
  });

  it('refuses a missing or wrong key with 401, counted against the address, and 429 once past its limit', async () => {
    const address = '192.0.2.200';
    const tries = [undefined, 'Bearer ahk_wrong', `Basic ${key}`];
    for (const [i, authorization] of tries.entries()) {
      const scope = scopeOf(address);
      await assert.rejects(authenticateKey(scope, authorization, false), refusal('UNAUTHORIZED'));
      assert.equal(scope.auth, undefined);
      assert.equal(scope.addressAdmission?.state.remaining, LIMIT - 1 - i);
    }
    const over = scopeOf(address);
    await assert.rejects(
      authenticateKey(over, 'Bearer ahk_wrong', false),
      refusal('RATE_LIMITED', (e) => e.details?.quota === 'address' && e.details.limit === LIMIT),
    );
    assert.equal(over.addressAdmission?.refused, true);
    // A good key from that address is still its account's.
    await authenticateKey(scopeOf(address), `Bearer ${key}`, false);
  });

  it('accepts a run credential only where the route does', async () => {
    const runCredential = 'Bearer ahr_not-a-live-run';
    await assert.rejects(
      authenticateKey(scopeOf(), runCredential, false),
      refusal('UNAUTHORIZED', (e) => /only calls/.test(e.message)),
    );
    await assert.rejects(
      authenticateKey(scopeOf(), runCredential, true),
      refusal('UNAUTHORIZED', (e) => /Invalid or expired run credential/.test(e.message)),
    );
  });

  it('passes on a failure that is not a refusal, uncounted', async () => {
    const store = new Proxy(p.deps.store, {
      get: (target, name, receiver) =>
        name === 'get' ? () => Promise.reject(new Error('store down')) : Reflect.get(target, name, receiver),
    });
    const scope = scopeOf(undefined, { ...p.deps, store });
    await assert.rejects(authenticateKey(scope, `Bearer ${key}`, false), /store down/);
    assert.equal(scope.addressAdmission, undefined);
  });

  it('tryAuthenticate: the caller of a good key, else nothing, never a refusal', async () => {
    assert.equal((await tryAuthenticate(p.deps, `Bearer ${key}`))?.accountId, accountId);
    assert.equal(await tryAuthenticate(p.deps, undefined), undefined);
    assert.equal(await tryAuthenticate(p.deps, 'Bearer ahk_wrong'), undefined);
    // A run credential opens no unrouted request.
    assert.equal(await tryAuthenticate(p.deps, 'Bearer ahr_not-a-live-run'), undefined);
  });
});
