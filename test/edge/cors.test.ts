import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corsHeaders, preflightHeaders } from '../../functions/edge/cors.ts';

/*
 * Cross-origin requests (functions/edge/cors.ts): none allowed by default; a listed origin (or any,
 * with `*`) gets its own origin back and the headers a page may read; a preflight gets the path's
 * methods and the headers asked for; an unlisted origin gets nothing to read.
 */

const APP = 'https://app.example.com';

describe('CORS (edge unit)', () => {
  it('sends nothing, not even Vary, when no origin is configured', () => {
    assert.deepEqual(corsHeaders([], APP), {});
    assert.deepEqual(preflightHeaders([], APP, ['GET'], 'authorization'), {});
  });

  it('gives an unlisted or absent origin only Vary: Origin', () => {
    for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', undefined]) {
      assert.deepEqual(corsHeaders([APP], origin), { Vary: 'Origin' }, String(origin));
      assert.deepEqual(preflightHeaders([APP], origin, ['GET'], 'authorization'), { Vary: 'Origin' });
    }
    assert.deepEqual(corsHeaders(['*'], undefined), { Vary: 'Origin' }, 'no Origin, no page to allow');
  });

  it('echoes a listed origin, or any with *, and lets the page read the headers its clients need', () => {
    for (const origins of [[APP], ['https://other.example', APP], ['*']]) {
      const headers = corsHeaders(origins, APP);
      assert.equal(headers['Access-Control-Allow-Origin'], APP, 'the origin itself, never *');
      assert.equal(headers.Vary, 'Origin');
      const exposed = headers['Access-Control-Expose-Headers']?.split(', ') ?? [];
      for (const name of [
        'X-Request-Id',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'Retry-After',
        'WWW-Authenticate',
      ])
        assert.ok(exposed.includes(name), name);
      assert.equal(headers['Access-Control-Allow-Credentials'], undefined, 'no cookies: the key is a header');
    }
  });

  it('answers a listed origin’s preflight with the path’s methods, the headers asked for, and a max age', () => {
    const headers = preflightHeaders([APP], APP, ['GET', 'DELETE', 'OPTIONS'], 'authorization, x-custom');
    assert.equal(headers['Access-Control-Allow-Origin'], APP);
    assert.equal(headers['Access-Control-Allow-Methods'], 'GET, DELETE, OPTIONS');
    assert.equal(headers['Access-Control-Allow-Headers'], 'authorization, x-custom');
    assert.equal(headers['Access-Control-Max-Age'], '600');
    assert.equal(headers.Vary, 'Origin, Access-Control-Request-Headers');
    const asksNone = preflightHeaders([APP], APP, ['GET'], undefined);
    assert.equal('Access-Control-Allow-Headers' in asksNone, false);
    assert.equal(asksNone['Access-Control-Allow-Methods'], 'GET');
  });
});
