/**
 * The local model client (functions/adapters/llm/pooled-fetch.ts) answers as the global fetch does
 * on what the AI SDK relies on: each case goes through both against one loopback server, and the
 * pooled fetch must give what the global one gives.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createPooledFetch } from '../../functions/adapters/llm/pooled-fetch.ts';

describe('pooled fetch: the same answers as the global fetch', () => {
  let server: Server;
  let base: string;
  const pooled = createPooledFetch();

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c;
      });
      req.on('end', () => {
        switch (req.url) {
          case '/gzip': {
            // A server (or a proxy before it) that compresses whatever the request asked for.
            const bytes = gzipSync(JSON.stringify({ compressed: true }));
            res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
            return res.end(bytes);
          }
          case '/gzip-error': {
            const bytes = gzipSync(JSON.stringify({ error: { message: 'overloaded' } }));
            res.writeHead(529, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
            return res.end(bytes);
          }
          case '/redirect':
            res.writeHead(307, { location: '/echo' });
            return res.end();
          case '/multi':
            res.setHeader('x-many', ['1', '2']);
            res.setHeader('set-cookie', ['a=1', 'b=2']);
            return res.end('{}');
          case '/slow': {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.write('{"part":');
            // The rest comes only if the client's abort failed (the fetch then resolves and the
            // test fails): the timer is cleared when the client goes, and holds nothing up.
            const late = setTimeout(() => res.end('1}'), 2_000).unref();
            res.on('close', () => clearTimeout(late));
            return;
          }
          default:
            res.writeHead(200, { 'content-type': 'application/json' });
            return res.end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /**
   * What a fetch answers, in the terms the SDK reads: status, body text and some headers. (The
   * global fetch keeps Content-Encoding on a body it decoded; the pooled one drops it: the SDK
   * reads neither.)
   */
  async function answer(f: typeof fetch, path: string, init?: RequestInit) {
    const res = await f(`${base}${path}`, init);
    return {
      status: res.status,
      text: await res.text(),
      many: res.headers.get('x-many'),
      cookies: res.headers.getSetCookie(),
    };
  }

  for (const [name, path, init] of [
    [
      'a JSON POST',
      '/echo',
      { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } },
    ],
    ['a compressed answer', '/gzip', undefined],
    ['a compressed error answer', '/gzip-error', undefined],
    [
      'a redirect (307: method and body kept)',
      '/redirect',
      { method: 'POST', body: '{"b":2}', headers: { 'content-type': 'application/json' } },
    ],
    ['repeated headers', '/multi', undefined],
  ] as const) {
    it(name, async () => {
      const expected = await answer(fetch, path, init as RequestInit | undefined);
      assert.deepEqual(await answer(pooled, path, init as RequestInit | undefined), expected);
    });
  }

  // The global fetch resolves at the headers and the body's read rejects; the pooled one reads the
  // body before it resolves, so the fetch itself rejects. Either way it is the signal's reason, which the SDK reads as an abort.
  it('an abort while the body arrives rejects with the signal’s reason', async () => {
    const outcomes = await Promise.all(
      [fetch, pooled].map(async (f) => {
        const signal = AbortSignal.timeout(100);
        return f(`${base}/slow`, { signal })
          .then((res) => res.text())
          .then(
            () => 'resolved',
            (err: Error) => err.name,
          );
      }),
    );
    assert.deepEqual(outcomes, ['TimeoutError', 'TimeoutError']);
  });

  it('an unreachable host rejects with TypeError: fetch failed and the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    for (const f of [fetch, pooled]) {
      await assert.rejects(f(`http://127.0.0.1:${port}/`), (err: Error) => {
        assert.ok(err instanceof TypeError);
        assert.equal(err.message, 'fetch failed');
        assert.ok(err.cause);
        return true;
      });
    }
  });
});
