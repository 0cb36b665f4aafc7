import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KeylessReads } from '../../functions/edge/address-admission.ts';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import { fetchRequest } from '../../functions/edge/fetch-request.ts';
import {
  IGNORED_KEYLESS_BODY_BYTES,
  KEYLESS_BODY_READS_PER_ADDRESS,
  keylessReadsRefusal,
} from '../../functions/edge/keyless-bodies.ts';
import { RouteMatcher } from '../../functions/edge/route-matcher.ts';
import { serveRoute } from '../../functions/edge/serve-route.ts';
import { ERROR_CODES, PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The bounds of bodies no API key vouches for (functions/edge/keyless-bodies.ts): a keyless route
 * that takes no body drops at most IGNORED_KEYLESS_BODY_BYTES of one, declared or not (a keyed one
 * its usual limit), and a body past KEYLESS_BODY_READS_PER_ADDRESS at once is its own 429.
 */

const matcher = new RouteMatcher();

describe('keyless bodies (edge unit)', () => {
  let p: TestPlatform;
  let n = 0;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  /** Serves GET `path` with `body` (its length declared unless `chunked`) as the app would. */
  async function serve(path: string, size: number, chunked: boolean, key?: string) {
    const bytes = new Uint8Array(size).fill(0x78);
    const headers = new Headers({ 'content-type': 'text/plain' });
    if (!chunked) headers.set('content-length', String(size));
    return serveWith(path, headers, chunked ? new Blob([bytes]).stream() : bytes, key);
  }

  async function serveWith(path: string, headers: Headers, body: ReadableStream | Uint8Array, key?: string) {
    const url = new URL(path, 'http://platform.test');
    const match = matcher.match('GET', url.pathname).match;
    assert.ok(match, `GET ${path} has a route`);
    if (key) headers.set('authorization', `Bearer ${key}`);
    const request = fetchRequest(url, 'GET', headers, body);
    const address = `198.18.0.${++n}`;
    const scope: RequestScope = {
      requestId: 'req_kb',
      address,
      origin: undefined,
      deps: p.deps,
      waitUntil: () => {},
    };
    const operation = async () => ({ ok: true });
    return serveRoute(
      scope,
      match,
      operation,
      request,
      url,
      { requestId: 'req_kb', address },
      new KeylessReads({}),
    );
  }

  const tooLarge = (limit: number) => (err: unknown) =>
    err instanceof PlatformError && err.code === 'DOCUMENT_TOO_LARGE' && err.details?.limit_bytes === limit;

  it('drops a body of IGNORED_KEYLESS_BODY_BYTES sent to a keyless route that takes none', async () => {
    assert.equal((await serve('/health', IGNORED_KEYLESS_BODY_BYTES, false)).status, 200);
    assert.equal((await serve('/health', IGNORED_KEYLESS_BODY_BYTES, true)).status, 200);
  });

  it('refuses one byte more with 413: read up to the bound, or declared and never read', {
    timeout: 5000,
  }, async () => {
    await assert.rejects(
      serve('/health', IGNORED_KEYLESS_BODY_BYTES + 1, true),
      tooLarge(IGNORED_KEYLESS_BODY_BYTES),
    );
    let pulled = false;
    const neverEnds = new ReadableStream<Uint8Array>(
      {
        pull: () => {
          pulled = true;
          return new Promise(() => {});
        },
      },
      { highWaterMark: 0 },
    );
    const declared = new Headers({ 'content-length': String(IGNORED_KEYLESS_BODY_BYTES + 1) });
    await assert.rejects(serveWith('/health', declared, neverEnds), tooLarge(IGNORED_KEYLESS_BODY_BYTES));
    assert.equal(pulled, false, 'a byte of the body was asked for');
  });

  it('leaves a keyed route that takes no body its usual limit', async () => {
    const { key } = await p.createAccount('keyedbodyco');
    assert.equal((await serve('/tasks', IGNORED_KEYLESS_BODY_BYTES + 1, true, key)).status, 200);
  });

  it('refuses a body past the address’s reads at once with 429, quota keyless_bodies, retry in a second', () => {
    const refusal = keylessReadsRefusal();
    assert.equal(refusal.code, 'RATE_LIMITED');
    assert.equal(ERROR_CODES[refusal.code].retryable, true);
    assert.deepEqual(refusal.details, {
      suggested_wait_time: 1,
      limit: KEYLESS_BODY_READS_PER_ADDRESS,
      quota: 'keyless_bodies',
    });
  });
});
