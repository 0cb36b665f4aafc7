/**
 * body-reading.ts, called directly on Requests whose body streams record each pull: a body is read
 * within its route's limit and AWS's event budget, reading stops at the first chunk past either
 * (the rest never pulled), a client gone mid-body is ClientGone, a dropped body is bounded, and a
 * streamed route's large body goes to a 0600 file that a failure removes. In memory, no socket.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import {
  BodyOverLimit,
  ClientGone,
  drainBody,
  IN_MEMORY_BODY_BYTES,
  readBody,
  spoolBody,
} from '../../functions/edge/body-reading.ts';
import { bodySizing } from '../../functions/edge/carried-body-meter.ts';
import { tempPrefix } from '../../functions/edge/temp-files.ts';
import { EVENT_BODY_BYTES } from '../../functions/shared/byte-limits.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

/** A POST whose body is `chunks`, one per pull; `pulls` counts the pulls, `cancelled` the cancel. */
function recorded(chunks: Uint8Array[], headers: Record<string, string> = {}, fail = false) {
  const seen = { pulls: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[seen.pulls++];
        if (chunk) controller.enqueue(chunk);
        else if (fail) controller.error(new Error('connection reset'));
        else controller.close();
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request('http://agenthost.test/x', {
    method: 'POST',
    body,
    headers,
    duplex: 'half',
  } as RequestInit);
  return { request, seen };
}
const bounds = (limit: number, contentType = 'application/json') => {
  const sizing = bodySizing(undefined, contentType, limit);
  return { limit, meter: sizing.meter(), refusal: sizing.refusal };
};
const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill);
const isRefusal = (message: RegExp, limit?: number) => (err: unknown) =>
  err instanceof PlatformError &&
  err.code === 'DOCUMENT_TOO_LARGE' &&
  message.test(err.message) &&
  (limit === undefined || err.details?.limit_bytes === limit);

describe('readBody', () => {
  it('reads every chunk up to the limit exactly', async () => {
    const { request } = recorded([bytes(3), bytes(2, 0x62)]);
    assert.equal((await readBody(request, bounds(5))).toString(), 'aaabb');
  });

  it('an absent body is empty', async () => {
    const request = new Request('http://agenthost.test/x', { method: 'POST' });
    assert.equal((await readBody(request, bounds(5))).length, 0);
  });

  it('stops at the first chunk past the limit: the rest is never pulled, the stream cancelled', async () => {
    const { request, seen } = recorded([bytes(4), bytes(4), bytes(4), bytes(4)]);
    await assert.rejects(readBody(request, bounds(6)), isRefusal(/limit of 6 bytes/, 6));
    assert.equal(seen.pulls, 2);
    assert.equal(seen.cancelled, true);
  });

  it('counts the body as the event carries it: escaping can refuse a body under the route’s limit', async () => {
    const quotes = bytes(Math.ceil(EVENT_BODY_BYTES / 2) + 1, 0x22);
    const { request } = recorded([quotes]);
    await assert.rejects(readBody(request, bounds(EVENT_BODY_BYTES)), isRefusal(/as it is carried/));
    const { request: plain } = recorded([bytes(quotes.length)]);
    assert.equal((await readBody(plain, bounds(EVENT_BODY_BYTES))).length, quotes.length);
  });

  it('a client gone mid-body is ClientGone', async () => {
    const { request } = recorded([bytes(2)], {}, true);
    await assert.rejects(readBody(request, bounds(100)), ClientGone);
  });
});

describe('drainBody', () => {
  it('drops a body within its bound, and throws BodyOverLimit at the first byte past it', async () => {
    await drainBody(recorded([bytes(8)]).request, 8);
    const { request, seen } = recorded([bytes(8), bytes(1), bytes(8)]);
    await assert.rejects(drainBody(request, 8), BodyOverLimit);
    assert.equal(seen.pulls, 2);
  });
});

describe('spoolBody', () => {
  const spooled = async () => (await readdir(tmpdir())).filter((name) => name.startsWith(tempPrefix('body')));

  it('keeps in memory a body the shell holds so, or one whose declared length is small', async () => {
    const held = await spoolBody(recorded([bytes(10)]).request, bounds(100), true);
    assert.deepEqual(held, { bytes: Buffer.from(bytes(10)) });
    const small = recorded([bytes(10)], { 'content-length': String(IN_MEMORY_BODY_BYTES) });
    assert.ok('bytes' in (await spoolBody(small.request, bounds(100), false)));
  });

  it('writes any other body to a file only its owner reads', async () => {
    const declared = recorded([bytes(5), bytes(5, 0x62)], {
      'content-length': String(IN_MEMORY_BODY_BYTES + 1),
    });
    for (const { request } of [declared, recorded([bytes(5), bytes(5, 0x62)])]) {
      const body = await spoolBody(request, bounds(100, 'application/zip'), false);
      assert.ok('path' in body);
      try {
        assert.equal(body.size, 10);
        assert.equal(await readFile(body.path, 'utf8'), 'aaaaabbbbb');
        assert.equal((await stat(body.path)).mode & 0o777, 0o600);
      } finally {
        await rm(body.path, { force: true });
      }
    }
  });

  it('removes its file when the body is refused or its client goes', async () => {
    const before = await spooled();
    const over = recorded([bytes(60), bytes(60)]);
    await assert.rejects(
      spoolBody(over.request, bounds(100, 'application/zip'), false),
      isRefusal(/limit/, 100),
    );
    const gone = recorded([bytes(10)], {}, true);
    await assert.rejects(spoolBody(gone.request, bounds(100, 'application/zip'), false), ClientGone);
    assert.deepEqual(await spooled(), before);
  });
});
