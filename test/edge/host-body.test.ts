/**
 * The Node shell's own body reading (edge/host-body.ts, node-request.ts), through body-reading.ts
 * on Node's real request: a body is read whole without its stream, reading stops at the first
 * chunk past the bounds and leaves the rest unread (the request neither complete nor destroyed), a
 * client gone mid-body is ClientGone, and a request whose stream was taken is read from it.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { BodyOverLimit, ClientGone, drainBody, readBody } from '../../functions/edge/body-reading.ts';
import { bodySizing } from '../../functions/edge/carried-body-meter.ts';
import { readHostBody } from '../../functions/edge/host-body.ts';
import { toFetchRequest } from '../../functions/local-platform/node-request.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

const bounds = (limit: number) => {
  const sizing = bodySizing(undefined, 'application/json', limit);
  return { limit, meter: sizing.meter(), refusal: sizing.refusal };
};

type Handler = (req: IncomingMessage, request: Request) => Promise<void>;
let handler: Handler = async () => undefined;
const server = createServer((req, res) => {
  const request = toFetchRequest(req, new URL(`http://localhost${req.url}`), req.method ?? 'GET');
  handler(req, request).finally(() => res.end('done'));
});
let port = 0;
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

/** Sends a chunked POST of `chunks`, ending it unless `abort`, in which case the socket is destroyed. */
function send(chunks: string[], abort = false): void {
  const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/x' });
  req.on('error', () => undefined);
  req.on('response', (res) => res.resume());
  for (const chunk of chunks) req.write(chunk);
  if (abort) setTimeout(() => req.destroy(), 50);
  else req.end();
}

/** Runs `check` on the next request the server gets, sent by `go`. */
function serving(check: Handler, go: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    handler = async (req, request) => {
      try {
        await check(req, request);
        resolve();
      } catch (err) {
        reject(err);
      }
    };
    go();
  });
}

describe('the Node shell’s own body reading', () => {
  it('reads the body whole without building its stream', async () => {
    await serving(
      async (_req, request) => {
        const body = await readBody(request, bounds(1000));
        assert.equal(body.toString(), '{"a":1,"b":2}');
        // The chunks went to the reader: no stream was built, none is left.
        assert.equal(request.body, null);
      },
      () => send(['{"a":1,', '"b":2}']),
    );
  });

  it('stops at the first chunk past the limit and leaves the rest unread', async () => {
    await serving(
      async (req, request) => {
        await assert.rejects(
          readBody(request, bounds(10)),
          (err) => err instanceof PlatformError && err.code === 'DOCUMENT_TOO_LARGE',
        );
        assert.equal(req.complete, false);
        assert.equal(req.destroyed, false);
        assert.equal(req.readableFlowing, false);
      },
      () => send(['12345678', '90abcdef'], true),
    );
  });

  it('drops a body within its bound, and throws BodyOverLimit past it', async () => {
    await serving(
      (_req, request) => drainBody(request, 100),
      () => send(['x'.repeat(50)]),
    );
    await serving(
      (_req, request) => assert.rejects(drainBody(request, 10), BodyOverLimit),
      () => send(['x'.repeat(50)], true),
    );
  });

  it('a client gone mid-body is ClientGone', async () => {
    await serving(
      (_req, request) => assert.rejects(readBody(request, bounds(1000)), ClientGone),
      () => send(['{"a":'], true),
    );
  });

  it('reads from the stream once the stream was taken', async () => {
    await serving(
      async (_req, request) => {
        const stream = request.body;
        assert.ok(stream);
        assert.equal(
          readHostBody(request, () => true),
          undefined,
        );
        const body = await readBody(request, bounds(1000));
        assert.equal(body.toString(), '{"a":1}');
      },
      () => send(['{"a":1}']),
    );
  });
});
