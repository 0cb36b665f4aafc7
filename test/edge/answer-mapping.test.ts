/**
 * answer-mapping.ts, called directly over a request scope with the platform's real dependencies
 * (in memory): a route's body gets the route's success status and JSON envelope, any answer gets
 * the headers every answer carries where it has not set its own (lazy answers and real ones), and
 * a 5xx answer leaves its operator line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { answer } from '../../functions/edge/answer-mapping.ts';
import { jsonAnswer, protocolAnswer, sseAnswer } from '../../functions/edge/answers.ts';
import { authenticateKey } from '../../functions/edge/authentication.ts';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import { responseParts } from '../../functions/edge/lazy-response.ts';
import { type OperationId, routes } from '../../functions/platform/routes.ts';
import { SERVER_ERROR_MESSAGE } from '../../functions/shared/server-error-log.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ORIGIN = 'https://app.example';

describe('answer mapping', () => {
  let platform: TestPlatform;
  let n = 0;

  before(async () => {
    platform = await startTestPlatform({ PLATFORM_CORS_ORIGINS: ORIGIN }, 'sqlite', {}, { inMemory: true });
  });
  after(() => platform.close());

  function scopeOf(id?: OperationId): RequestScope {
    return {
      requestId: `req_mapping_${++n}`,
      address: '192.0.2.1',
      waitUntil: () => {},
      origin: ORIGIN,
      deps: platform.deps,
      ...(id ? { route: { id, def: routes[id] } } : {}),
    };
  }
  const at = { method: 'POST', path: '/sent/path' };

  it('a route’s body: its success status, JSON with the request id, the common headers', async () => {
    const scope = scopeOf('forkAgent');
    const res = await answer(scope, { id: 'agt_1' }, at);
    assert.equal(routes.forkAgent.success.status, 201);
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { id: 'agt_1', metadata: { request_id: scope.requestId } });
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('x-request-id'), scope.requestId);
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
  });

  it('a 204 route sends no body, whatever the operation returned', async () => {
    const res = await answer(scopeOf('deleteAgent'), { ignored: true }, at);
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
  });

  it('a document route’s body goes as it is; no route is a 200', async () => {
    const doc = await answer(scopeOf('getOpenApi'), { openapi: '3.1.0' }, at);
    assert.deepEqual(await doc.json(), { openapi: '3.1.0' });
    const unrouted = await answer(scopeOf(), { allowed: true }, at);
    assert.equal(unrouted.status, 200);
  });

  it('the caller’s rate limits go on the answer', async () => {
    const scope = scopeOf('forkAgent');
    await authenticateKey(scope, `Bearer ${platform.ownerKey}`, false);
    const res = await answer(scope, {}, at);
    assert.match(res.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);
    assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
  });

  it('a lazy answer keeps its own headers, whatever their case, and stays lazy', async () => {
    const scope = scopeOf('forkAgent');
    const built = jsonAnswer({ a: 1 }, scope.requestId, {
      status: 200,
      headers: { 'Cache-control': 'max-age=60', Deprecation: 'true' },
    });
    const res = await answer(scope, built, at);
    assert.equal(res.status, 200, 'the answer’s own status, not the route’s 201');
    const parts = responseParts(res);
    assert.ok(parts, 'no Response built on the way');
    const names = Object.keys(parts.headers).map((name) => name.toLowerCase());
    assert.equal(names.filter((name) => name === 'cache-control').length, 1);
    assert.equal(res.headers.get('cache-control'), 'max-age=60');
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.equal(res.headers.get('x-request-id'), scope.requestId);
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
  });

  it('a real Response keeps its own headers and gets the others', async () => {
    const scope = scopeOf('forkAgent');
    const stream = new Response('data: x\n\n').body as ReadableStream<Uint8Array>;
    const res = await answer(scope, sseAnswer(stream), at);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-request-id'), scope.requestId);
    assert.equal(await res.text(), 'data: x\n\n');
  });

  it('a Response whose headers the Fetch API made immutable gets the others on a copy', async () => {
    const scope = scopeOf('forkAgent');
    const redirect = Response.redirect('https://app.example/next', 303);
    assert.throws(() => redirect.headers.set('x-probe', '1'), TypeError, 'the headers are immutable');
    const res = await answer(scope, redirect, at);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), 'https://app.example/next');
    assert.equal(res.headers.get('x-request-id'), scope.requestId);
  });

  it('a 5xx answer leaves one operator line naming the route’s template; others none', async () => {
    const lines = (id: string) =>
      platform.logs
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === SERVER_ERROR_MESSAGE && l.request_id === id);
    const failed = scopeOf('forkAgent');
    await answer(failed, protocolAnswer(503, {}, '{}'), at);
    const logged = lines(failed.requestId);
    assert.equal(logged.length, 1);
    assert.equal(logged[0].level, 'warn');
    assert.equal(logged[0].status, 503);
    assert.equal(logged[0].method, 'POST');
    assert.equal(logged[0].route, routes.forkAgent.path);

    const fine = scopeOf('forkAgent');
    await answer(fine, protocolAnswer(429, {}, '{}'), at);
    await answer(fine, { id: 'x' }, at);
    assert.equal(lines(fine.requestId).length, 0);
  });
});
