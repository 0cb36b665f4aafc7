/**
 * serve-route.ts through createPlatformApp with the platform's real dependencies and operations of
 * the test's own, in memory: the order is the one rule, so a body's stream records when it is
 * pulled, and nothing pulls it before the caller is known (key, or the address and the path's
 * credential) and its declared size checked; then the input is parsed and the operation answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FetchHandler } from '../../functions/edge/edge-context.ts';
import type { AnyOperation } from '../../functions/edge/operations.ts';
import { createPlatformApp } from '../../functions/edge/platform-app.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const LIMIT = 2048;

describe('serving a route, in order', () => {
  let platform: TestPlatform;
  let app: FetchHandler;
  let events: string[] = [];
  let seen: Parameters<AnyOperation>[0] | undefined;
  let n = 0;
  const record =
    (name: string, result: unknown = { ok: true }): AnyOperation =>
    async (input) => {
      events.push(name);
      seen = input;
      return result;
    };

  before(async () => {
    platform = await startTestPlatform(
      { PLATFORM_MAX_BODY_BYTES: String(LIMIT) },
      'sqlite',
      {},
      { inMemory: true },
    );
    app = createPlatformApp(
      async () => platform.deps,
      {
        createApiKey: record('operation'),
        listApiKeys: record('operation', { data: [] }),
        paymentWebhook: record('operation'),
        triggerWebhook: record('operation'),
        deleteApiKey: async () => {
          throw new PlatformError('CONFLICT', 'Not now', { id: 'x' });
        },
      },
      {
        credentialChecks: {
          triggerWebhook: async (_deps, params) => {
            events.push('credential');
            if (params.webhook_secret !== 'right') throw new PlatformError('NOT_FOUND', 'Schedule not found');
          },
        },
      },
    );
  });
  after(() => platform.close());

  /** A request whose body stream records each pull in `events`. */
  function send(method: string, path: string, headers: Record<string, string>, chunks: string[] = []) {
    events = [];
    seen = undefined;
    let i = 0;
    const body =
      method === 'GET'
        ? null
        : new ReadableStream<Uint8Array>(
            {
              pull(controller) {
                events.push('pull');
                const chunk = chunks[i++];
                if (chunk === undefined) controller.close();
                else controller.enqueue(new TextEncoder().encode(chunk));
              },
            },
            { highWaterMark: 0 },
          );
    const request = new Request(`http://agenthost.test${path}`, {
      method,
      headers,
      body,
      duplex: 'half',
    } as RequestInit);
    return app(
      request,
      { requestId: `req_serve_${++n}`, address: `192.0.2.${n % 250}` },
      { waitUntil: () => {} },
    );
  }
  const json = { 'content-type': 'application/json' };
  const owner = () => ({ ...json, authorization: `Bearer ${platform.ownerKey}` });
  const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  it('a good key and body: the body is read, then checked, then the operation runs', async () => {
    const res = await send('POST', '/api-keys', owner(), ['{"name":', '"ci"}']);
    assert.equal(res.status, 201);
    assert.deepEqual(events, ['pull', 'pull', 'pull', 'operation']);
    assert.deepEqual(seen?.body, { name: 'ci' });
    assert.equal(seen?.auth?.accountId !== undefined, true);
    assert.match(res.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);
  });

  it('no key or a wrong one: 401, the body never pulled', async () => {
    for (const authorization of [undefined, 'Bearer ahk_wrongwrongwrongwrong']) {
      const headers: Record<string, string> = authorization ? { ...json, authorization } : json;
      const res = await send('POST', '/api-keys', headers, ['{}']);
      assert.equal(res.status, 401);
      assert.deepEqual(events, []);
    }
  });

  it('a declared size past the limit: 413 before a byte is read, but only once the caller is known', async () => {
    const big = { 'content-length': String(LIMIT + 1) };
    const refused = await send('POST', '/api-keys', { ...owner(), ...big }, ['{}']);
    assert.equal(refused.status, 413);
    assert.deepEqual(events, []);
    const unknown = await send('POST', '/api-keys', { ...json, ...big }, ['{}']);
    assert.equal(unknown.status, 401, 'the caller first');
  });

  it('a body that grows past the limit is refused as it is read, the operation never run', async () => {
    const res = await send('POST', '/api-keys', owner(), ['{"name":"', 'x'.repeat(LIMIT), '"}']);
    assert.equal(res.status, 413);
    assert.deepEqual(events, ['pull', 'pull']);
  });

  it('keyless with the credential in the path: checked before the body is pulled', async () => {
    const wrong = await send('POST', '/webhooks/sch_1/wrong', json, ['{}']);
    assert.equal(wrong.status, 404);
    assert.deepEqual(events, ['credential']);
    const right = await send('POST', '/webhooks/sch_1/right', json, ['{}']);
    assert.equal(right.status, 200);
    assert.deepEqual(events, ['credential', 'pull', 'pull', 'operation']);
  });

  it('keyless, a declared size past the limit: refused before the credential or the body, and counted', async () => {
    const headers = { ...json, 'content-length': String(100 * 1024 * 1024) };
    const res = await send('POST', '/webhooks/sch_1/right', headers, ['{}']);
    assert.equal(res.status, 413);
    assert.deepEqual(events, []);
    assert.match(res.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);
  });

  it('a route that takes no body: what is sent is read and dropped, never handed on', async () => {
    const res = await send('GET', '/api-keys', owner());
    assert.equal(res.status, 200);
    assert.equal(seen?.body, undefined);
    const withBody = await send('DELETE', '/api-keys/key_1', owner(), ['ignored']);
    assert.equal(withBody.status, 409);
    assert.deepEqual(events, ['pull', 'pull']);
  });

  it('invalid input is 400 with its fields; the operation never runs', async () => {
    const res = await send('POST', '/api-keys', owner(), ['{"name":"","extra":1}']);
    assert.equal(res.status, 400);
    assert.equal(await code(res), 'INVALID_INPUT');
    assert.ok(!events.includes('operation'));
  });

  it('an operation’s error is answered through the error mapping, on the route’s template', async () => {
    const res = await send('DELETE', '/api-keys/key_1', owner());
    assert.equal(res.status, 409);
    assert.equal(await code(res), 'CONFLICT');
  });
});
