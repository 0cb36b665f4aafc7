import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallResponse } from '../../functions/core/calls/call-context.ts';
import { STREAM_BUFFER_BYTES, streamedCall, wantsEventStream } from '../../functions/edge/streamed-call.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

/** A streamed call's answer (functions/edge/streamed-call.ts), with its heartbeat shortened. */

const body: CallResponse = {
  body: { data: { ok: true }, warnings: [], metadata: { processing_time_ms: 1, version: 'v1' } },
  headers: {},
};
const text = (reply: CallResponse | Response) => (reply as Response).text();

describe('a streamed call', () => {
  it('is asked for with Accept: text/event-stream, preferred to JSON (RFC 9110; test/edge/accept-negotiation.test.ts)', () => {
    assert.equal(wantsEventStream('text/event-stream'), true);
    assert.equal(wantsEventStream('text/event-stream, application/json;q=0.9'), true);
    assert.equal(wantsEventStream('application/json, text/event-stream'), false);
    assert.equal(wantsEventStream('application/json, text/event-stream;q=0.9'), false);
    assert.equal(wantsEventStream('text/event-stream;q=0'), false);
    assert.equal(wantsEventStream('application/json'), false);
    assert.equal(wantsEventStream('text/event-streams'), false);
    assert.equal(wantsEventStream(undefined), false);
  });

  it('holds the engine at its next event while the client reads nothing (backpressure), and lets it go on as the client reads', async () => {
    const piece = 'x'.repeat(1024);
    let sent = 0;
    let signal!: AbortSignal;
    const reply = await streamedCall('req_bp', async (stream, gone) => {
      signal = gone;
      const events = stream.open({});
      for (let i = 0; i < 1000 && !gone.aborted; i++) {
        await events.delta(piece);
        sent++;
      }
      return body;
    });
    assert.ok(reply instanceof Response);
    assert.equal(reply.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const turns = async () => {
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    // Nothing read: the engine waits once about STREAM_BUFFER_BYTES of events are queued.
    await turns();
    const bound = Math.ceil(STREAM_BUFFER_BYTES / piece.length) + 1;
    assert.ok(sent > 0 && sent <= bound, `${sent} events went out unread (at most ${bound})`);
    const before = sent;
    // The client reads a little: the engine goes on by about as much, no further.
    const reader = (reply.body as ReadableStream<Uint8Array>).getReader();
    let read = 0;
    while (read < 8 * piece.length) read += (await reader.read()).value?.byteLength ?? 0;
    await turns();
    assert.ok(sent > before && sent <= before + bound, `${before} then ${sent}`);
    // The client goes: the engine is let go and told.
    await reader.cancel();
    await turns();
    assert.equal(signal.aborted, true);
    assert.ok(sent < 1000, 'the engine stopped when its client went');
  });

  it('sends a comment line while nothing else goes out, then the result with the request id', async () => {
    // The call stays silent until the client has read two comment lines (waits on that, not a clock).
    let speak!: () => void;
    const spoken = new Promise<void>((resolve) => {
      speak = resolve;
    });
    const reply = await streamedCall(
      'req_1',
      async (stream) => {
        const events = stream.open({});
        await spoken;
        events.delta('hi');
        return body;
      },
      { heartbeatMs: 30 },
    );
    assert.ok(reply instanceof Response);
    assert.equal(reply.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = (reply.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let sent = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      sent += decoder.decode(value, { stream: true });
      if (sent.split(': keep-alive\n\n').length - 1 === 2) speak();
    }
    const beats = sent.split(': keep-alive\n\n').length - 1;
    assert.ok(beats >= 2, sent);
    assert.ok(sent.indexOf(': keep-alive') < sent.indexOf('event: delta'), sent);
    assert.ok(
      sent.endsWith(
        `event: result\ndata: ${JSON.stringify({ ...body.body, metadata: { ...body.body.metadata, request_id: 'req_1' } })}\n\n`,
      ),
      sent,
    );
  });

  it('is the ordinary answer or refusal when the call ends before it opens the stream', async () => {
    const reply = await streamedCall('req_2', async () => body);
    assert.equal(reply, body);
    await assert.rejects(
      streamedCall('req_3', async () => {
        throw new PlatformError('RATE_LIMITED', 'quota');
      }),
      /quota/,
    );
  });

  it('ends with the error envelope when the call fails after it opened; an unexpected error names only the request id', async () => {
    const reply = await streamedCall('req_4', async (stream) => {
      stream.open({});
      throw new Error('secret internals');
    });
    const sent = await text(reply);
    assert.match(sent, /^event: error\ndata: /);
    assert.ok(!sent.includes('secret internals'), sent);
    const envelope = JSON.parse(sent.split('data: ')[1] as string);
    assert.equal(envelope.error.code, 'INTERNAL_ERROR');
    assert.equal(envelope.metadata.request_id, 'req_4');
  });

  it('aborts the call when the client cancels the stream', async () => {
    let aborted = false;
    const reply = await streamedCall('req_5', (stream, signal) => {
      stream.open({});
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(new PlatformError('TIMEOUT', 'gone'));
        }),
      );
    });
    await (reply as Response).body?.cancel();
    assert.equal(aborted, true);
  });

  it('hands the call it aborted to waitUntil when the client hangs up, so that its record is written before a Lambda returns', async () => {
    const handed: Promise<unknown>[] = [];
    let recorded = false;
    const reply = await streamedCall(
      'req_6',
      (stream, signal) => {
        stream.open({});
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            // The call's end: its record written after the abort, on its own time.
            setTimeout(() => {
              recorded = true;
              reject(new PlatformError('TIMEOUT', 'gone'));
            }, 20);
          }),
        );
      },
      { waitUntil: (work) => void handed.push(work) },
    );
    assert.equal(handed.length, 0, 'nothing handed over while the client reads');
    await (reply as Response).body?.cancel();
    assert.equal(handed.length, 1);
    await Promise.all(handed);
    assert.equal(recorded, true, 'the work handed over settles once the call has ended');
  });
});
