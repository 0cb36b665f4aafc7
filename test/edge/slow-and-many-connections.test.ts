import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  IGNORED_KEYLESS_BODY_BYTES,
  KEYLESS_BODY_READS_PER_ADDRESS,
} from '../../functions/edge/keyless-bodies.ts';
import { OVER_CAP_GRACE_MS } from '../../functions/local-platform/connection-guard.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The local server's edge as a hostile client meets it (docs/http.md "Slow and many connections",
 * docs/decisions.md "Reading bodies"), over raw sockets: connections past the per-address cap are
 * refused, slow headers and slow bodies are cut within the configured time, a keyless request's
 * body is refused before it is read, and each refusal counts against the address's per-minute
 * limit. Each case speaks from its own loopback address, so its counts are its own.
 */

const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1_200;
const CAP = 5;
const LIMIT = 6;

interface RawClient {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server has closed the connection (or it failed), with the time since opening. */
  closed: Promise<number>;
}

describe('the edge: slow and many connections, keyless bodies', () => {
  let p: TestPlatform;
  let port = 0;
  let nextAddress = 10;
  /** A loopback address of its own for each case. */
  const address = () => `127.0.0.${nextAddress++}`;

  before(async () => {
    p = await startTestPlatform({
      [ENV.maxConnectionsPerAddress]: String(CAP),
      [ENV.headersTimeoutMs]: String(HEADERS_TIMEOUT_MS),
      [ENV.requestTimeoutMs]: String(REQUEST_TIMEOUT_MS),
      [ENV.addressRateLimit]: String(LIMIT),
    });
    port = Number(new URL(p.url).port);
    p.clock.set('2026-06-01T10:00:00Z');
  });
  after(() => p.close());

  const open = async (from: string): Promise<RawClient> => {
    const started = performance.now();
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    const closed = new Promise<number>((resolve) => {
      const done = () => resolve(performance.now() - started);
      socket.once('close', done);
      socket.once('error', done);
    });
    return { socket, received: () => text, closed };
  };

  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

  /** One request on a fresh connection from `from`; the answer's status line and body once it is whole. */
  const ask = async (from: string, request: string) => {
    const c = await open(from);
    c.socket.write(request);
    const text = await waitFor('an answer', () => {
      const t = c.received();
      const head = t.indexOf('\r\n\r\n');
      if (head < 0) return undefined;
      const length = Number(/content-length: (\d+)/i.exec(t.slice(0, head))?.[1] ?? 0);
      return t.length >= head + 4 + length ? t : undefined;
    });
    c.socket.destroy();
    return { status: Number(text.slice(9, 12)), text };
  };

  it('refuses a connection past the per-address cap with 429, and serves other addresses and freed places', async () => {
    const from = address();
    const held = await Promise.all(Array.from({ length: CAP }, () => open(from)));
    const over = await ask(from, get('/health'));
    assert.equal(over.status, 429, over.text);
    assert.match(over.text, /"quota":"connections"/);
    assert.match(over.text, /\r\nconnection: close\r\n/i);

    const other = await ask(address(), get('/health'));
    assert.equal(other.status, 200, 'another address has places of its own');

    // An over-cap connection that sends nothing is closed soon, not held to the headers' timeout.
    const silent = await open(from);
    const silentFor = await silent.closed;
    assert.ok(silentFor < OVER_CAP_GRACE_MS + 500, `an over-cap connection was held ${silentFor} ms`);

    held[0]?.socket.destroy();
    await held[0]?.closed;
    const freed = await waitFor('a freed place', async () => {
      const r = await ask(from, get('/health'));
      return r.status === 200 ? r : undefined;
    });
    assert.equal(freed.status, 200);
    for (const c of held) c.socket.destroy();
  });

  it('cuts a client whose headers trickle in, within the headers timeout', async () => {
    const c = await open(address());
    c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => c.socket.write('X-Slow: 1\r\n'), 100);
    const after = await c.closed;
    clearInterval(trickle);
    assert.match(c.received(), /^HTTP\/1.1 408 /, c.received());
    assert.ok(after < HEADERS_TIMEOUT_MS + 1_000, `held ${after} ms with a ${HEADERS_TIMEOUT_MS} ms timeout`);
  });

  it('cuts a client whose body never finishes, within the request timeout, key or not', async () => {
    for (const [path, auth] of [
      ['/tasks', `Authorization: Bearer ${p.ownerKey}\r\n`],
      ['/billing/webhook', ''],
    ] as const) {
      const c = await open(address());
      c.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`,
      );
      const trickle = setInterval(() => c.socket.write(' '), 100);
      const after = await c.closed;
      clearInterval(trickle);
      assert.ok(
        after < REQUEST_TIMEOUT_MS + 1_000,
        `${path}: held ${after} ms with a ${REQUEST_TIMEOUT_MS} ms timeout`,
      );
      assert.match(c.received(), /^(HTTP\/1.1 408 |$)/, c.received());
    }
  });

  it('counts a timed-out and an over-cap request against the address: the next request sees the limit', async () => {
    const from = address();
    // Two requests Node cuts for slowness, each counted.
    for (let i = 0; i < 2; i++) {
      const c = await open(from);
      c.socket.write('GET /health HTTP/1.1\r\n');
      await c.closed;
      assert.match(c.received(), /^HTTP\/1.1 408 /);
    }
    // The rest refused past the connection cap, each counted.
    const held = await Promise.all(Array.from({ length: CAP }, () => open(from)));
    for (let i = 2; i < LIMIT; i++) assert.equal((await ask(from, get('/health'))).status, 429);
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    // LIMIT counted: the next keyless request is over it.
    const next = await ask(from, get('/health'));
    assert.equal(next.status, 429, next.text);
    assert.match(next.text, /"quota":"address"/);
  });

  it('refuses a keyless route’s body before reading it, and drops a small one without holding it', async () => {
    const big = await ask(address(), get('/health', 'Content-Length: 1048576\r\n'));
    assert.equal(big.status, 413, 'a declared 1 MB body on /health is refused before a byte is read');

    const chunk = 'x'.repeat(4096);
    const chunked = await open(address());
    chunked.socket.write(`${get('/health', 'Transfer-Encoding: chunked\r\n')}`);
    for (let sent = 0; sent <= IGNORED_KEYLESS_BODY_BYTES; sent += chunk.length)
      chunked.socket.write(`1000\r\n${chunk}\r\n`);
    await waitFor('the 413', () => (/^HTTP\/1.1 \d+/.test(chunked.received()) ? true : undefined));
    assert.match(chunked.received(), /^HTTP\/1.1 413 /, 'a chunked body past the bound, never ending');
    chunked.socket.destroy();

    const small = await ask(address(), get('/health', 'Content-Length: 2\r\n').concat('{}'));
    assert.equal(small.status, 200, small.text);

    // A webhook whose secret is wrong is refused before its body, which never has to arrive.
    const webhook = await ask(
      address(),
      `POST /webhooks/00000000-0000-0000-0000-000000000000/wrong HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`,
    );
    assert.equal(webhook.status, 404, webhook.text);
  });

  it('reads at most a few keyless bodies at once per address where no credential comes first', async () => {
    const from = address();
    const slow = await Promise.all(
      Array.from({ length: KEYLESS_BODY_READS_PER_ADDRESS }, async () => {
        const c = await open(from);
        c.socket.write(
          'POST /billing/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
        );
        return c;
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    const over = await ask(
      from,
      'POST /billing/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
    );
    assert.equal(over.status, 429, over.text);
    assert.match(over.text, /"quota":"keyless_bodies"/);
    // Another address reads its own.
    const other = await ask(
      address(),
      'POST /billing/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    assert.notEqual(other.status, 429, other.text);
    for (const c of slow) c.socket.destroy();
  });
});
