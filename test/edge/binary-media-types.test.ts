/**
 * binary-media-types.ts: the content types API Gateway is told to pass base64-encoded (the stack
 * declares binaryMediaTypes()), and the edge's test of one request's Content-Type against them
 * (carriedAsBase64), which counts a body against the event budget as base64. The two must agree,
 * or a body fits on one deployment and not the other.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { binaryMediaTypes, carriedAsBase64 } from '../../functions/edge/binary-media-types.ts';
import { routeList } from '../../functions/platform/routes.ts';

describe('the binary media types', () => {
  const types = binaryMediaTypes();

  it('list every non-JSON type a route takes as its raw body, once, in order', () => {
    const taken = routeList.flatMap(([, route]) => route.binaryBody?.contentTypes ?? []);
    for (const type of taken.filter((t) => !/json/i.test(t))) assert.ok(types.includes(type), type);
    assert.ok(types.includes('multipart/form-data'), 'a call with files');
    assert.deepEqual(types, [...new Set(types)].sort());
  });

  it('never JSON: API Gateway would base64-encode every JSON body of every route', () => {
    assert.ok(types.length > 0);
    for (const type of types) assert.doesNotMatch(type, /json/i);
  });

  it('a request of each is carried as base64, whatever the case and parameters', () => {
    for (const type of types) {
      assert.ok(carriedAsBase64(type), type);
      assert.ok(carriedAsBase64(` ${type.toUpperCase()} ; charset=binary; boundary=x`), type);
    }
  });

  it('any other type, or none, is carried as text', () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'multipart/form-data-x',
      'application',
      '',
      ';multipart/form-data',
      undefined,
    ])
      assert.equal(carriedAsBase64(type), false, String(type));
  });
});
