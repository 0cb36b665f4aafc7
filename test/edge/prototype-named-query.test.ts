import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { proxyEvent } from '../../functions/emulator/api-gateway-proxy-event.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * Query keys and header names spelled like Object.prototype's members, sent raw as the outside
 * client that found them did: each is an ordinary parameter (ignored, or 400 naming it), never a
 * 500, on a keyless route and on one with a key; and the API Gateway emulator's event keeps them as
 * ordinary entries.
 */

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const QUERIES = [
  ...NAMES.flatMap((n) => [`?${n}=1`, `?${n}=`]),
  `?${NAMES.map((n) => `${n}=1`).join('&')}`,
  '?constructor=1&constructor=2',
  '?limit=5&__proto__=1',
];

describe('query keys named like Object.prototype members', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('are ordinary parameters on the local server, with and without a key, in the query and as headers', async () => {
    for (const [path, key] of [
      ['/health', null],
      ['/public/agents', null],
      ['/tasks', p.ownerKey],
      ['/nope', null],
    ] as const) {
      for (const query of QUERIES) {
        const res = await p.request('GET', `${path}${query}`, { key });
        assert.ok(res.status < 500, `GET ${path}${query}: ${res.status} ${res.text}`);
        if (res.status === 400) {
          const { fields } = errorOf(res);
          assert.ok(
            fields.some((f) => NAMES.some((n) => f === `query.${n}`)),
            `a 400 names the parameter: ${res.text}`,
          );
        }
      }
      const res = await p.request('GET', path, {
        key,
        headers: { constructor: 'x', toString: 'y', hasOwnProperty: 'z' },
      });
      assert.ok(res.status < 500, `GET ${path} with such headers: ${res.status} ${res.text}`);
    }
    const health = await p.request('GET', '/health?__proto__=1&constructor=', { key: null });
    assert.equal(health.status, 200, health.text);
  });

  it('are ordinary entries of the API Gateway emulator’s event', async () => {
    const seen: ReturnType<typeof proxyEvent>[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split(/\?(.*)/s);
      seen.push(
        proxyEvent(
          req,
          'GET',
          rawPath,
          rawQuery,
          { route: { path: '/health' } as never, params: {} },
          Buffer.alloc(0),
          'r1',
          Date.now(),
          { apiId: 'api', stageName: 'prod', binaryTypes: [] },
        ),
      );
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(
        `http://127.0.0.1:${port}/health?__proto__=1&constructor=a&constructor=b&toString=`,
        {
          headers: { constructor: 'h' },
        },
      );
      assert.equal(res.status, 200);
      const event = JSON.parse(JSON.stringify(seen[0]));
      // Written as JSON: in an object literal `__proto__` would set the prototype, not a key.
      assert.deepEqual(
        event.queryStringParameters,
        JSON.parse('{"__proto__":"1","constructor":"b","toString":""}'),
      );
      assert.deepEqual(event.multiValueQueryStringParameters.constructor, ['a', 'b']);
      assert.deepEqual(event.multiValueHeaders.constructor, ['h']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
