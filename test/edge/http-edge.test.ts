import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { operations as edgeOperations } from '../../functions/http/edge.ts';
import { createModuleHandler } from '../../functions/http/module-handler.ts';
import { operations as taskOperations } from '../../functions/http/tasks.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * What every response carries whoever sends it (docs/http.md): the rate-limit headers of the
 * caller's account, or of the client's address when no valid key vouches for the request; 405 with
 * Allow on a known path; CORS for the configured origins only. From the other side: a client
 * without a key cannot go past its address's limit, and a page from an unlisted origin gets no CORS
 * headers.
 */

const ALLOWED_ORIGIN = 'http://app.localhost:3000';

function rateLimit(res: { headers: Headers }) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

describe('HTTP edge: rate-limit headers, 405, CORS, the per-address limit', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform(
      { [ENV.corsOrigins]: ALLOWED_ORIGIN, [ENV.addressRateLimit]: '5' },
      'sqlite',
      {},
      { inMemory: true },
    );
  });
  after(() => p.close());

  it('carries the caller’s rate-limit headers on an unknown route’s 404 and on a 405', async () => {
    p.clock.set('2026-05-01T10:00:00Z');
    const account = await p.createAccount('edge-caller', 'free');
    const ok = await p.request('GET', '/tasks', { key: account.key });
    for (const [method, path] of [
      ['GET', '/no/such/route'],
      ['GET', '/tasks/x/y/z'],
      ['DELETE', '/tasks'],
    ] as const) {
      const res = await p.request(method, path, { key: account.key });
      assert.ok([404, 405].includes(res.status), `${method} ${path}: ${res.status}`);
      assert.deepEqual(rateLimit(res), rateLimit(ok), `${method} ${path} shows the caller's quota`);
      assert.equal(rateLimit(res).limit, String(TIER_LIMITS.free.dailyCalls));
    }
  });

  it('carries the caller’s rate-limit headers on a 413', async () => {
    p.clock.set('2026-05-01T10:00:00Z');
    const account = await p.createAccount('edge-large', 'free');
    const res = await p.request('POST', '/tasks', {
      key: account.key,
      rawBody: JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(res.status, 413);
    assert.equal(errorOf(res).code, 'DOCUMENT_TOO_LARGE');
    assert.equal(rateLimit(res).limit, String(TIER_LIMITS.free.dailyCalls));
  });

  it('routes a path whose first segment is a literal route’s to the agent call route when only it matches', async () => {
    // Routes are looked up by first segment; /{org}/… must stay a candidate under every literal one.
    const account = await p.createAccount('edge-first-segment', 'free');
    const call = await p.request('POST', '/tasks/no-such-agent/v1/run', { key: account.key, body: {} });
    assert.equal(call.status, 404);
    assert.match(errorOf(call).message, /^Agent tasks\/no-such-agent\/v1/);
    const other = await p.request('GET', '/tasks/no-such-agent/v1/run', { key: account.key });
    assert.equal(other.status, 405);
    assert.equal(other.headers.get('allow'), 'POST, OPTIONS');
    // From the other side: without a key, the same path is the call route's 401, not another route's answer.
    const anonymous = await p.request('POST', '/tasks/no-such-agent/v1/run', { key: null, body: {} });
    assert.equal(anonymous.status, 401);
    assert.equal(errorOf(anonymous).code, 'UNAUTHORIZED');
    const unrouted = await p.request('POST', '/tasks/a/b/c/d', { key: account.key, body: {} });
    assert.equal(unrouted.status, 404);
    assert.doesNotMatch(errorOf(unrouted).message, /^Agent/);
  });

  it('answers a known path’s other method with 405 and Allow listing its methods', async () => {
    const res = await p.request('PATCH', '/workspaces/ws_x/secrets/NAME', { body: {} });
    assert.equal(res.status, 405);
    assert.equal(errorOf(res).code, 'METHOD_NOT_ALLOWED');
    assert.deepEqual(res.headers.get('allow')?.split(', ').sort(), ['DELETE', 'OPTIONS']);
  });

  it('counts requests without a valid key per address and refuses past the limit with Retry-After', async () => {
    // A fresh minute: the limit (5 here) starts over.
    p.clock.set('2026-05-01T11:00:00Z');
    const seen: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      // Every kind of keyless request counts: a public route, a bad key, an unknown route.
      const res =
        i % 3 === 0
          ? await p.request('GET', '/health', { key: null })
          : i % 3 === 1
            ? await p.request('GET', '/tasks', { key: 'ahk_not_a_key_at_all_000000000000' })
            : await p.request('GET', '/nope', { key: null });
      assert.notEqual(res.status, 429, `request ${i + 1} is within the limit`);
      assert.equal(res.headers.get('x-ratelimit-limit'), '5');
      seen.push(res.headers.get('x-ratelimit-remaining'));
      assert.equal(res.headers.get('x-ratelimit-reset'), String(Date.parse('2026-05-01T11:01:00Z') / 1000));
    }
    assert.deepEqual(seen, ['4', '3', '2', '1', '0']);
    const refused = await p.request('GET', '/public/agents', { key: null });
    assert.equal(refused.status, 429);
    assert.equal(errorOf(refused).code, 'RATE_LIMITED');
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');

    // A valid key is limited by its account's quota, not by the address's.
    const withKey = await p.request('GET', '/tasks');
    assert.equal(withKey.status, 200);
    assert.equal(withKey.headers.get('x-ratelimit-limit'), String(TIER_LIMITS.pro.dailyCalls));

    p.clock.set('2026-05-01T11:01:00Z');
    const nextMinute = await p.request('GET', '/health', { key: null });
    assert.equal(nextMinute.status, 200, 'a new minute starts a new count');
    assert.equal(nextMinute.headers.get('x-ratelimit-remaining'), '4');
  });

  it('refuses a wrong or missing key with 429, not 401, once its address is past the limit', async () => {
    p.clock.set('2026-05-01T13:00:00Z');
    const wrong = 'ahk_not_a_key_at_all_000000000000';
    for (let i = 0; i < 5; i++) {
      const res = await p.request('GET', '/tasks', { key: wrong });
      assert.equal(res.status, 401, `guess ${i + 1} is within the limit`);
    }
    for (const [method, path, key] of [
      ['GET', '/tasks', wrong],
      ['GET', '/tasks', null],
      ['POST', '/tasks', wrong],
      ['GET', '/nope', wrong],
    ] as const) {
      const res = await p.request(method, path, { key, body: method === 'POST' ? {} : undefined });
      assert.equal(res.status, 429, `${method} ${path} past the limit: ${res.text}`);
      assert.equal(errorOf(res).code, 'RATE_LIMITED');
      assert.equal(res.headers.get('retry-after'), '60');
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    }
    const withKey = await p.request('GET', '/tasks');
    assert.equal(withKey.status, 200, 'a valid key is not under the address’s limit');
  });

  it('refuses a wrong key with 429 past the limit in the Lambda handler too, as API Gateway invokes it', async () => {
    p.clock.set('2026-05-01T14:00:00Z');
    const handlers = {
      tasks: createModuleHandler('tasks', taskOperations, async () => p.deps),
      edge: createModuleHandler('edge', edgeOperations, async () => p.deps),
    };
    const event = (resource: string, path: string) =>
      ({
        resource,
        path,
        httpMethod: 'GET',
        headers: { Authorization: 'Bearer ahk_not_a_key_at_all_000000000000' },
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        stageVariables: null,
        body: null,
        isBase64Encoded: false,
        requestContext: { requestId: 'r', identity: { sourceIp: '127.0.0.99' } },
      }) as unknown as APIGatewayProxyEvent;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await handlers.tasks(event('/tasks', '/tasks'))).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    const unrouted = await handlers.edge(event('/nope', '/nope'));
    assert.equal(unrouted.statusCode, 429, 'a path with no route past the limit');
    assert.equal(unrouted.headers?.['Retry-After'], '60');
  });

  it('a module’s function answers 404, not 500, for another function’s route that a greedy resource gave it', async () => {
    // On AWS `/tasks/{task_id}/{proxy+}` takes `POST /tasks/a/b/c`, which has the agent call's shape
    // (lib/api-resource-tree.ts); the tasks function serves no agent call.
    p.clock.set('2026-05-01T15:00:00Z');
    const account = await p.createAccount('edge-greedy', 'free');
    const tasks = createModuleHandler('tasks', taskOperations, async () => p.deps);
    const res = await tasks({
      resource: '/tasks/{task_id}/{proxy+}',
      path: '/tasks/a/b/c',
      httpMethod: 'POST',
      headers: { Authorization: `Bearer ${account.key}`, 'Content-Type': 'application/json' },
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { task_id: 'a', proxy: 'b/c' },
      stageVariables: null,
      body: '{}',
      isBase64Encoded: false,
      requestContext: { requestId: 'r', identity: { sourceIp: '127.0.0.98' } },
    } as unknown as APIGatewayProxyEvent);
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(JSON.parse(res.body).error.code, 'NOT_FOUND');
  });

  it('answers a CORS preflight for an allowed origin, and gives an unlisted origin nothing to read', async () => {
    p.clock.set('2026-05-01T12:00:00Z');
    const preflight = await p.fetch(`/tasks`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    assert.deepEqual(preflight.headers.get('access-control-allow-methods')?.split(', ').sort(), [
      'GET',
      'OPTIONS',
      'POST',
    ]);
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type');

    const other = await p.fetch(`/tasks`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.localhost', 'access-control-request-method': 'GET' },
    });
    assert.equal(other.status, 204);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(other.headers.get('access-control-allow-methods'), null);

    const get = await p.request('GET', '/tasks', { headers: { origin: ALLOWED_ORIGIN } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    assert.match(get.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
    assert.match(
      get.headers.get('access-control-expose-headers') ?? '',
      /X-Trace-Id/,
      'a browser reads a call’s trace id',
    );
    const getOther = await p.request('GET', '/tasks', { headers: { origin: 'http://evil.localhost' } });
    assert.equal(getOther.headers.get('access-control-allow-origin'), null);

    const unknownPath = await p.fetch(`/no/such/route`, { method: 'OPTIONS' });
    assert.equal(unknownPath.status, 404);
  });
});

describe('HTTP edge: CORS is off unless origins are configured', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('sends no CORS headers to any origin by default', async () => {
    const preflight = await p.fetch(`/tasks`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.localhost:3000', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('allow'), 'POST, GET, OPTIONS');
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    const get = await p.request('GET', '/tasks', { headers: { origin: 'http://app.localhost:3000' } });
    assert.equal(get.headers.get('access-control-allow-origin'), null);
  });
});
