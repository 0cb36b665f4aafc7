import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../functions/core/api-keys/api-keys.ts';
import { refusingQuota, responseHeaders } from '../../functions/edge/response-headers.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The headers every answer carries (functions/edge/response-headers.ts), beyond what
 * edge-response-headers.test.ts checks (the caller's or the address's count, read and never
 * written): the headers with no dependencies, the quota a refusal names, a failed read, CORS, and
 * which refusals name their own quota (refusingQuota).
 */

const ORIGIN = 'https://app.example.com';

describe('response headers (edge unit)', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({ PLATFORM_CORS_ORIGINS: ORIGIN }, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  const auth = async (org: string) => {
    const { key } = await p.createAccount(org);
    return authenticate(p.deps, `Bearer ${key}`);
  };

  it('without dependencies: the content type, no caching and the request id, nothing else', async () => {
    assert.deepEqual(await responseHeaders({ requestId: 'req_1', origin: ORIGIN, auth: undefined }), {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Request-Id': 'req_1',
    });
  });

  it('adds CORS for an allowed origin, and only Vary for another', async () => {
    const allowed = await responseHeaders({ requestId: 'req_2', origin: ORIGIN, deps: p.deps });
    assert.equal(allowed['Access-Control-Allow-Origin'], ORIGIN);
    const other = await responseHeaders({ requestId: 'req_3', origin: 'https://evil.example', deps: p.deps });
    assert.equal(other['Access-Control-Allow-Origin'], undefined);
    assert.equal(other.Vary, 'Origin');
  });

  it('shows the quota a refusal names instead of the caller’s', async () => {
    const quota = { limit: 7, remaining: 0, reset: 1_800_000_000 };
    const headers = await responseHeaders(
      { requestId: 'req_4', origin: undefined, deps: p.deps, auth: await auth('quotaco') },
      quota,
    );
    assert.equal(headers['X-RateLimit-Limit'], '7');
    assert.equal(headers['X-RateLimit-Remaining'], '0');
    assert.equal(headers['X-RateLimit-Reset'], '1800000000');
  });

  it('leaves the rate limit out, and logs why, when the caller’s count cannot be read', async () => {
    const store = new Proxy(p.deps.store, {
      get: (target, name, receiver) =>
        name === 'get'
          ? () => Promise.reject(new Error('counter unreadable'))
          : Reflect.get(target, name, receiver),
    });
    const deps = { ...p.deps, store };
    const headers = await responseHeaders({
      requestId: 'req_5',
      origin: undefined,
      deps,
      auth: await auth('unreadco'),
    });
    assert.equal(headers['X-Request-Id'], 'req_5');
    assert.equal(headers['X-RateLimit-Limit'], undefined);
    assert.ok(p.logs.some((l) => l.includes('rate-limit state unavailable') && l.includes('req_5')));
  });

  it('refusingQuota: the quota of a 429 of the sandbox, paid or request quota; none for any other', () => {
    const refusal = (code: 'RATE_LIMITED' | 'SERVICE_UNAVAILABLE', details: Record<string, unknown>) =>
      new PlatformError(code, 'refused', details);
    for (const quota of ['sandbox', 'paid', 'requests'])
      assert.deepEqual(refusingQuota(refusal('RATE_LIMITED', { quota, limit: 5, reset: 60 })), {
        limit: 5,
        remaining: 0,
        reset: 60,
      });
    // The address's and the keyless reads' quotas are not the caller's to show; nor is a 503's.
    for (const quota of ['address', 'keyless_bodies', 'daily'])
      assert.equal(refusingQuota(refusal('RATE_LIMITED', { quota, limit: 5, reset: 60 })), undefined, quota);
    assert.equal(
      refusingQuota(refusal('SERVICE_UNAVAILABLE', { quota: 'sandbox', limit: 5, reset: 60 })),
      undefined,
    );
    assert.equal(refusingQuota(refusal('RATE_LIMITED', { quota: 'sandbox', limit: 5 })), undefined);
    assert.equal(
      refusingQuota(refusal('RATE_LIMITED', { quota: 'sandbox', limit: '5', reset: 60 })),
      undefined,
    );
    assert.equal(refusingQuota(new PlatformError('RATE_LIMITED', 'no details')), undefined);
  });
});
