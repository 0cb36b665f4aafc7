/**
 * lazy-response.ts (with lazy-members.ts): a lazy Response behaves as the Response of the same
 * parts for every member a caller may use, built once when first needed; its parts are given to a
 * shell only while it is unbuilt; distinctHeaders leaves each header name once. In memory.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { distinctHeaders, lazyResponse, responseParts } from '../../functions/edge/lazy-response.ts';

const HEADERS = { 'Content-Type': 'application/json', 'X-Request-Id': 'req_lazy' };
const BODY = '{"a":1}';

describe('the lazy Response', () => {
  it('is a Response, answering every member as the Response of its parts does', async () => {
    const lazy = lazyResponse(BODY, 201, HEADERS);
    const real = new Response(BODY, { status: 201, headers: HEADERS });
    assert.ok(lazy instanceof Response);
    assert.equal(Object.prototype.toString.call(lazy), '[object Response]');
    const members = Object.getOwnPropertyNames(Response.prototype).filter((name) => name !== 'constructor');
    for (const name of members) {
      const value = Reflect.get(lazy, name);
      if (typeof value === 'function') continue;
      if (name === 'headers') assert.deepEqual([...value], [...real.headers]);
      else if (name === 'body') assert.ok(value instanceof ReadableStream);
      else assert.equal(value, Reflect.get(real, name), name);
    }
    assert.equal(await lazy.text(), BODY);
  });

  it('each reading method gives what a real Response gives', async () => {
    const lazy = () => lazyResponse(BODY, 200, HEADERS);
    assert.deepEqual(await lazy().json(), { a: 1 });
    assert.equal(Buffer.from(await lazy().arrayBuffer()).toString(), BODY);
    assert.equal(Buffer.from(await lazy().bytes()).toString(), BODY);
    assert.equal(await (await lazy().blob()).text(), BODY);
    const copy = lazy().clone();
    assert.equal(copy.status, 200);
    assert.equal(await copy.text(), BODY);
    const form = await lazyResponse('a=1&b=2', 200, {
      'Content-Type': 'application/x-www-form-urlencoded',
    }).formData();
    assert.equal(form.get('b'), '2');
  });

  it('is built once: its body is read once, as a Response’s is', async () => {
    const lazy = lazyResponse(BODY, 200, HEADERS);
    assert.equal(lazy.bodyUsed, false);
    assert.equal(await lazy.text(), BODY);
    assert.equal(lazy.bodyUsed, true);
    await assert.rejects(() => lazy.text(), TypeError);
  });

  it('ok is true for 2xx only', () => {
    const ok = (status: number) => lazyResponse(null, status, {}).ok;
    assert.deepEqual([199, 200, 204, 299, 300, 404].map(ok), [false, true, true, true, false, false]);
  });

  it('bytes and no body are bodies as well', async () => {
    const bytes = lazyResponse(new Uint8Array([1, 2, 3]), 200, {});
    assert.deepEqual([...(await bytes.bytes())], [1, 2, 3]);
    const none = lazyResponse(null, 204, {});
    assert.equal(none.body, null);
    assert.equal(await none.text(), '');
  });
});

describe('responseParts', () => {
  it('gives the parts while nothing but status and ok was asked, and the same object each time', () => {
    const lazy = lazyResponse(BODY, 201, HEADERS);
    assert.equal(lazy.status, 201);
    assert.equal(lazy.ok, true);
    const parts = responseParts(lazy);
    assert.deepEqual(parts, { status: 201, headers: HEADERS, body: BODY });
    assert.equal(responseParts(lazy), parts);
  });

  it('gives nothing once the Response is built (a change to the parts would not show)', () => {
    for (const use of [(r: Response) => r.headers, (r: Response) => r.body, (r: Response) => r.clone()]) {
      const lazy = lazyResponse(BODY, 200, HEADERS);
      use(lazy);
      assert.equal(responseParts(lazy), undefined);
    }
  });

  it('gives nothing for a Response built as one', () => {
    assert.equal(responseParts(new Response(BODY)), undefined);
  });

  it('a change to the parts before the build shows in the Response', async () => {
    const lazy = lazyResponse(BODY, 200, { A: '1' });
    const parts = responseParts(lazy);
    assert.ok(parts);
    parts.headers = { ...parts.headers, B: '2' };
    assert.equal(lazy.headers.get('b'), '2');
    assert.equal(lazy.headers.get('a'), '1');
  });
});

describe('distinctHeaders', () => {
  it('keeps each name once whatever its case, the last value and its spelling winning', () => {
    assert.deepEqual(
      distinctHeaders({ 'Cache-Control': 'no-store', 'X-A': '1', 'cache-control': 'max-age=5', 'x-a': '2' }),
      { 'cache-control': 'max-age=5', 'x-a': '2' },
    );
  });

  it('drops Content-Length in any case (the shell sets the body’s own)', () => {
    assert.deepEqual(distinctHeaders({ 'Content-Length': '9', 'content-length': '1', A: 'a' }), { A: 'a' });
  });

  it('leaves distinct names as they are', () => {
    const headers = { A: '1', B: '2', 'X-Request-Id': 'req_1' };
    assert.deepEqual(distinctHeaders(headers), headers);
  });
});
