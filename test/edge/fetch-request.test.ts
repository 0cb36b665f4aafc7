import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetchRequest } from '../../functions/edge/fetch-request.ts';

/*
 * A Fetch API Request for what a client actually sent (functions/edge/fetch-request.ts): a GET or
 * HEAD with a body, and a CONNECT, TRACE or TRACK, which the Fetch API will not build, are built
 * still, report the method sent and keep the body, so the edge answers them as any request.
 */

const url = new URL('http://platform.test/tasks?limit=2');
const bytes = (text: string) => new TextEncoder().encode(text);
const stream = (text: string) => new Blob([bytes(text)]).stream();

describe('fetch request (edge unit)', () => {
  it('builds an ordinary method as sent, with its headers and body, a stream’s too', async () => {
    for (const body of [bytes('{"a":1}'), stream('{"a":1}')]) {
      const request = fetchRequest(url, 'PATCH', new Headers({ 'content-type': 'application/json' }), body);
      assert.equal(request.method, 'PATCH');
      assert.equal(request.url, url.href);
      assert.equal(request.headers.get('content-type'), 'application/json');
      assert.equal(await request.text(), '{"a":1}');
    }
    assert.equal(fetchRequest(url, 'DELETE', new Headers(), undefined).body, null);
  });

  it('keeps the body of a GET or HEAD and reports the method sent', async () => {
    for (const method of ['GET', 'HEAD']) {
      const request = fetchRequest(url, method, new Headers({ 'x-sent': 'yes' }), stream('dropped later'));
      assert.equal(request.method, method);
      assert.equal(request.headers.get('x-sent'), 'yes');
      assert.equal(await request.text(), 'dropped later', method);
    }
  });

  it('builds a GET or HEAD without a body as one without', () => {
    for (const method of ['GET', 'HEAD']) {
      const request = fetchRequest(url, method, new Headers({ authorization: 'Bearer k' }), undefined);
      assert.equal(request.method, method);
      assert.equal(request.headers.get('authorization'), 'Bearer k');
      assert.equal(request.body, null);
    }
  });

  it('builds CONNECT, TRACE and TRACK, which the Fetch API refuses, reporting the method sent', async () => {
    for (const method of ['CONNECT', 'TRACE', 'TRACK']) {
      assert.equal(fetchRequest(url, method, new Headers(), undefined).method, method);
      const withBody = fetchRequest(url, method, new Headers(), bytes('x'));
      assert.equal(withBody.method, method);
      assert.equal(await withBody.text(), 'x');
    }
  });
});
