import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { incrementDailyCalls } from '../../functions/core/usage/daily-usage.ts';
import { routeList } from '../../functions/platform/routes.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('platform behaviour (end to end over HTTP)', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('GET /health answers 200 without a key', async () => {
    const res = await p.request('GET', '/health', { key: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
  });

  it('puts a request id in metadata and X-Request-Id on every response, success or error', async () => {
    const responses = [
      await p.request('GET', '/health', { key: null }),
      await p.request('GET', '/tasks'),
      await p.request('GET', '/tasks', { key: null }),
      await p.request('GET', '/nope', { key: null }),
      await p.request('POST', '/tasks', { body: {} }),
    ];
    const ids = new Set<string>();
    for (const res of responses) {
      const id = res.headers.get('x-request-id');
      assert.ok(id, `X-Request-Id on ${res.status}`);
      assert.equal((res.body.metadata as { request_id: string }).request_id, id);
      ids.add(id);
    }
    assert.equal(ids.size, responses.length, 'each request has its own id');
  });

  it('answers an unknown path with a 404 envelope and a known path’s other methods with 405', async () => {
    const unknown = await p.request('GET', '/no/such/path');
    assert.equal(unknown.status, 404);
    assert.equal(errorOf(unknown).code, 'NOT_FOUND');
    const method = await p.request('PUT', '/tasks', { body: {} });
    assert.equal(method.status, 405);
    assert.equal(errorOf(method).code, 'METHOD_NOT_ALLOWED');
    assert.match(errorOf(method).message, /PUT/);
    assert.equal(method.headers.get('allow'), 'POST, GET, OPTIONS');
  });

  it('sends X-RateLimit headers reflecting the tier and today’s count, resetting at the next UTC midnight', async () => {
    p.clock.set('2026-03-10T18:30:00Z');
    const free = await p.createAccount('free-org', 'free');
    const res = await p.request('GET', '/tasks', { key: free.key });
    assert.equal(res.headers.get('x-ratelimit-limit'), String(TIER_LIMITS.free.dailyCalls));
    assert.equal(res.headers.get('x-ratelimit-remaining'), '1000');
    assert.equal(res.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 2, 11) / 1000));

    await incrementDailyCalls(p.deps, free.accountId, 3);
    const after3 = await p.request('GET', '/tasks', { key: free.key });
    assert.equal(after3.headers.get('x-ratelimit-remaining'), '997');

    const err = await p.request('GET', '/tasks/does-not-exist', { key: free.key });
    assert.equal(err.status, 404);
    assert.equal(err.headers.get('x-ratelimit-remaining'), '997', 'error responses carry the headers too');

    p.clock.set('2026-03-11T00:00:01Z');
    const nextDay = await p.request('GET', '/tasks', { key: free.key });
    assert.equal(nextDay.headers.get('x-ratelimit-remaining'), '1000', 'a new UTC day starts a new count');
    assert.equal(nextDay.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 2, 12) / 1000));

    const pro = await p.request('GET', '/tasks');
    assert.equal(pro.headers.get('x-ratelimit-limit'), String(TIER_LIMITS.pro.dailyCalls));
  });

  it('serves a valid OpenAPI 3.1 document listing every route', async () => {
    const res = await p.request('GET', '/openapi.json', { key: null });
    assert.equal(res.status, 200);
    const doc = res.body as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    assert.equal(doc.openapi, '3.1.0');
    // Exactly as served: not a field added or removed.
    assert.equal((res.body as { metadata?: unknown }).metadata, undefined);
    assert.ok(res.headers.get('x-request-id'), 'the request id is in its header');
    await SwaggerParser.validate(JSON.parse(res.text) as never);
    for (const [operationId, route] of routeList) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.path} is documented`);
      assert.equal(op.operationId, operationId);
    }
    const create = doc.paths['/tasks']?.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { required: string[] } } } };
    };
    assert.deepEqual(create.requestBody.content['application/json'].schema.required, ['title']);
  });
});
