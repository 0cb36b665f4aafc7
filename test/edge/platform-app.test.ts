/**
 * platform-app.ts, called in memory with the platform's real dependencies and operations of the
 * test's own: a request no route takes (404; 405 with Allow; the CORS preflight), the fallback that
 * answers before the API's 404 and never for a path with routes, a route of another function's, a
 * refusal the shell decided, a client gone mid-body, and dependencies that fail to build.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EdgeContext, FetchHandler } from '../../functions/edge/edge-context.ts';
import { createPlatformApp } from '../../functions/edge/platform-app.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ORIGIN = 'https://app.example';

describe('the platform app', () => {
  let platform: TestPlatform;
  let app: FetchHandler;
  let ran: string[] = [];
  let fallbacks: string[] = [];
  let n = 0;

  before(async () => {
    platform = await startTestPlatform({ PLATFORM_CORS_ORIGINS: ORIGIN }, 'sqlite', {}, { inMemory: true });
    app = createPlatformApp(
      async () => platform.deps,
      {
        listApiKeys: async () => {
          ran.push('listApiKeys');
          return { data: [] };
        },
        createApiKey: async () => {
          ran.push('createApiKey');
          return {};
        },
      },
      {
        fallback: (_request, pathname) => {
          fallbacks.push(pathname);
          return pathname === '/dashboard/app.js' ? new Response('js', { status: 200 }) : undefined;
        },
      },
    );
  });
  after(() => platform.close());

  function call(method: string, path: string, init: RequestInit = {}, context: Partial<EdgeContext> = {}) {
    ran = [];
    fallbacks = [];
    const request = new Request(`http://agenthost.test${path}`, { method, ...init });
    return app(
      request,
      { requestId: `req_app_${++n}`, address: `198.51.100.${n}`, ...context },
      { waitUntil: () => {} },
    );
  }
  const envelope = async (res: Response) =>
    (await res.json()) as {
      error: { code: string; details?: { allow?: string[] } };
      metadata: { request_id: string };
    };

  it('a path no route has: the fallback first, else 404, counted against the address', async () => {
    const file = await call('GET', '/dashboard/app.js');
    assert.equal(await file.text(), 'js');
    const res = await call('GET', '/no/such/path');
    assert.deepEqual(fallbacks, ['/no/such/path']);
    assert.equal(res.status, 404);
    const body = await envelope(res);
    assert.equal(body.error.code, 'NOT_FOUND');
    assert.equal(body.metadata.request_id, res.headers.get('x-request-id'));
    assert.match(res.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);
  });

  it('another method on a path with routes: 405 with Allow, the fallback not asked', async () => {
    const res = await call('PUT', '/api-keys', { headers: { authorization: `Bearer ${platform.ownerKey}` } });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, POST, OPTIONS');
    assert.deepEqual((await envelope(res)).error.details?.allow, ['GET', 'POST', 'OPTIONS']);
    assert.deepEqual(fallbacks, []);
    assert.deepEqual(ran, []);
  });

  it('OPTIONS on a path with routes: the preflight, CORS only for a listed origin', async () => {
    const headers = { origin: ORIGIN, 'access-control-request-headers': 'authorization, content-type' };
    const res = await call('OPTIONS', '/api-keys', { headers });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('allow'), 'GET, POST, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, POST, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type');
    const other = await call('OPTIONS', '/api-keys', { headers: { origin: 'https://evil.example' } });
    assert.equal(other.status, 204);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(other.headers.get('access-control-allow-methods'), null);
  });

  it('a route whose operation this app does not serve is 404, as a path outside the table', async () => {
    const res = await call('DELETE', '/api-keys/key_1', {
      headers: { authorization: `Bearer ${platform.ownerKey}` },
    });
    assert.equal(res.status, 404);
    assert.deepEqual(fallbacks, ['/api-keys/key_1']);
  });

  it('a served route runs its operation', async () => {
    const res = await call('GET', '/api-keys', { headers: { authorization: `Bearer ${platform.ownerKey}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(ran, ['listApiKeys']);
  });

  it('a refusal the shell decided is the answer, before any route, counted', async () => {
    const refusal = new PlatformError('RATE_LIMITED', 'Too many connections', { suggested_wait_time: 2 });
    const res = await call(
      'GET',
      '/api-keys',
      { headers: { authorization: `Bearer ${platform.ownerKey}` } },
      { refusal },
    );
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '2');
    assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    assert.deepEqual(ran, []);
  });

  it('a client gone mid-body: a bare 400 nobody reads, no envelope, no operation', async () => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('socket hang up'));
      },
    });
    const res = await call('POST', '/api-keys', {
      body,
      duplex: 'half',
      headers: { authorization: `Bearer ${platform.ownerKey}`, 'content-type': 'application/json' },
    } as RequestInit);
    assert.equal(res.status, 400);
    assert.equal(await res.text(), '');
    assert.deepEqual(ran, []);
  });

  it('dependencies that fail to build: a 500 naming the request id', async () => {
    const broken = createPlatformApp(async () => {
      throw new Error('no store');
    }, {});
    const write = process.stderr.write;
    process.stderr.write = () => true; // the operator line goes to stderr without a logger
    try {
      const res = await broken(
        new Request('http://agenthost.test/api-keys'),
        { requestId: 'req_nodeps', address: '::1' },
        {
          waitUntil: () => {},
        },
      );
      assert.equal(res.status, 500);
      const body = await envelope(res);
      assert.equal(body.error.code, 'INTERNAL_ERROR');
      assert.equal(body.metadata.request_id, 'req_nodeps');
      assert.equal(res.headers.get('x-request-id'), 'req_nodeps');
    } finally {
      process.stderr.write = write;
    }
  });
});
