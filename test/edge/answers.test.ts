/**
 * The answers an operation builds itself (functions/edge/answers.ts): the JSON body with the
 * request id in its metadata, JSON with headers of its own, a page, Server-Sent Events and a
 * protocol's own answer, each as its helper promises it. Called directly, in memory.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htmlAnswer, jsonAnswer, jsonBody, protocolAnswer, sseAnswer } from '../../functions/edge/answers.ts';

const ID = 'req_answers';

describe('jsonBody', () => {
  it('adds metadata.request_id to an object, keeping the metadata it has', () => {
    assert.deepEqual(JSON.parse(jsonBody({ a: 1, metadata: { trace_id: 't' } }, ID) as string), {
      a: 1,
      metadata: { trace_id: 't', request_id: ID },
    });
  });

  it('the request id wins over one the body names itself', () => {
    assert.deepEqual(JSON.parse(jsonBody({ metadata: { request_id: 'other' } }, ID) as string), {
      metadata: { request_id: ID },
    });
  });

  it('leaves an array, a scalar and null as they are, and a document untouched', () => {
    assert.equal(jsonBody([1, 2], ID), '[1,2]');
    assert.equal(jsonBody('text', ID), '"text"');
    assert.equal(jsonBody(null, ID), 'null');
    assert.equal(jsonBody({ openapi: '3.1.0' }, ID, true), '{"openapi":"3.1.0"}');
  });

  it('is null for a body JSON cannot state (no body rather than the text "undefined")', () => {
    assert.equal(jsonBody(undefined, ID), null);
  });
});

describe('the answers', () => {
  it('jsonAnswer: 200 JSON with the request id, its own headers and status', async () => {
    const plain = jsonAnswer({ ok: true }, ID);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await plain.json(), { ok: true, metadata: { request_id: ID } });

    const own = jsonAnswer({ ok: true }, ID, { status: 202, headers: { Deprecation: 'true' } });
    assert.equal(own.status, 202);
    assert.equal(own.headers.get('deprecation'), 'true');
  });

  it('jsonAnswer: a Content-Type of the caller’s replaces the JSON one', () => {
    const answer = jsonAnswer({}, ID, { headers: { 'Content-Type': 'application/problem+json' } });
    assert.equal(answer.headers.get('content-type'), 'application/problem+json');
  });

  it('htmlAnswer: the page as it is, with nothing else allowed to load', async () => {
    const page = htmlAnswer('<p>paid</p>', 402);
    assert.equal(page.status, 402);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy') ?? '', /^default-src 'none'/);
    assert.equal(await page.text(), '<p>paid</p>');
  });

  it('sseAnswer: the stream with the event-stream headers, which the caller’s cannot undo', async () => {
    const events = new Response('data: 1\n\n').body as ReadableStream<Uint8Array>;
    const answer = sseAnswer(events, { 'X-Trace-Id': 'tr_1', 'Content-Type': 'application/json' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(answer.headers.get('cache-control'), 'no-cache');
    assert.equal(answer.headers.get('x-accel-buffering'), 'no');
    assert.equal(answer.headers.get('x-trace-id'), 'tr_1');
    assert.equal(await answer.text(), 'data: 1\n\n');
  });

  it('protocolAnswer: status, headers and body as given, the body not rewritten', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"result":{}}';
    const answer = protocolAnswer(202, { 'Mcp-Session-Id': 's1' }, body);
    assert.equal(answer.status, 202);
    assert.equal(answer.headers.get('mcp-session-id'), 's1');
    assert.equal(await answer.text(), body);
  });
});
