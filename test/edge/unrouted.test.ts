import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import { unrouted } from '../../functions/edge/unrouted.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * A request no route takes (functions/edge/unrouted.ts): 404 for a path no route has, 405 with the
 * path's methods for another method, a CORS preflight for OPTIONS; a good key's caller shows its
 * own rate limit, any other request counts against its address first.
 */

const ORIGIN = 'https://app.example.com';
const LIMIT = 2;

describe('unrouted requests (edge unit)', () => {
  let p: TestPlatform;
  let key: string;
  let n = 0;
  before(async () => {
    p = await startTestPlatform(
      { PLATFORM_CORS_ORIGINS: ORIGIN, PLATFORM_ADDRESS_RATE_LIMIT: String(LIMIT) },
      'sqlite',
      {},
      { inMemory: true },
    );
    ({ key } = await p.createAccount('unroutedco'));
  });
  after(() => p.close());

  function scopeOf(address = `100.64.0.${++n}`): RequestScope {
    return { requestId: 'req_unrouted', address, origin: ORIGIN, deps: p.deps, waitUntil: () => {} };
  }

  const request = (method: string, path: string, authorization?: string, requestedHeaders?: string) => ({
    method,
    path,
    authorization,
    requestedHeaders,
  });

  const refusal =
    (code: string, test: (err: PlatformError) => boolean = () => true) =>
    (err: unknown) =>
      err instanceof PlatformError && err.code === code && test(err);

  it('is 404 for a path no route has, counted against the address without a good key', async () => {
    for (const authorization of [undefined, 'Bearer ahk_wrong']) {
      const scope = scopeOf();
      await assert.rejects(
        unrouted(scope, request('GET', '/nowhere', authorization), undefined),
        refusal('NOT_FOUND'),
      );
      assert.equal(scope.auth, undefined);
      assert.equal(scope.addressAdmission?.state.remaining, LIMIT - 1);
    }
  });

  it('shows a good key’s caller and leaves its address uncounted', async () => {
    const scope = scopeOf();
    await assert.rejects(
      unrouted(scope, request('GET', '/nowhere', `Bearer ${key}`), undefined),
      refusal('NOT_FOUND'),
    );
    assert.equal(scope.auth?.org, 'unroutedco');
    assert.equal(scope.addressAdmission, undefined);
  });

  it('is 405 for another method of a known path, with its methods and OPTIONS allowed', async () => {
    const scope = scopeOf();
    await assert.rejects(
      unrouted(scope, request('PUT', '/tasks/t1'), ['GET', 'DELETE']),
      refusal('METHOD_NOT_ALLOWED', (e) => {
        assert.deepEqual(e.details, { allow: ['GET', 'DELETE', 'OPTIONS'] });
        return /PUT is not supported on \/tasks\/t1/.test(e.message);
      }),
    );
    assert.deepEqual(scope.allow, ['GET', 'DELETE', 'OPTIONS']);
  });

  it('answers OPTIONS on a known path as a preflight: 204, Allow and the CORS of the origin', async () => {
    const res = await unrouted(scopeOf(), request('OPTIONS', '/tasks/t1', undefined, 'authorization'), [
      'GET',
    ]);
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.equal(res.headers.get('allow'), 'GET, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization');
  });

  it('is 429 past the address’s limit, before 404, 405 or a preflight', async () => {
    const address = '100.64.1.1';
    for (let i = 0; i < LIMIT; i++)
      await assert.rejects(
        unrouted(scopeOf(address), request('GET', '/nowhere'), undefined),
        refusal('NOT_FOUND'),
      );
    const limited = refusal('RATE_LIMITED', (e) => e.details?.quota === 'address');
    await assert.rejects(unrouted(scopeOf(address), request('GET', '/nowhere'), undefined), limited);
    await assert.rejects(unrouted(scopeOf(address), request('PUT', '/tasks/t1'), ['GET']), limited);
    await assert.rejects(unrouted(scopeOf(address), request('OPTIONS', '/tasks/t1'), ['GET']), limited);
    // A good key from that address is its account's, not the address's.
    await assert.rejects(
      unrouted(scopeOf(address), request('GET', '/nowhere', `Bearer ${key}`), undefined),
      refusal('NOT_FOUND'),
    );
  });
});
