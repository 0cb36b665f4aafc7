import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsedUrl, requestUrlOf } from '../../functions/edge/request-url.ts';

/*
 * A request's URL as an object (functions/edge/request-url.ts): the one its shell parsed and kept
 * on the Request, else parsed from `request.url`.
 */

describe('request URL (edge unit)', () => {
  it('is the URL the shell kept on the Request, not parsed again', () => {
    const request = new Request('http://platform.test/tasks?limit=2');
    const kept = new URL('http://platform.test/tasks?limit=2');
    Object.defineProperty(request, parsedUrl, { value: kept });
    assert.equal(requestUrlOf(request), kept);
  });

  it('is parsed from the Request’s own URL when no shell kept one', () => {
    const url = requestUrlOf(new Request('http://platform.test/tasks/t%201?limit=2'));
    assert.ok(url instanceof URL);
    assert.equal(url.pathname, '/tasks/t%201');
    assert.equal(url.searchParams.get('limit'), '2');
  });

  it('ignores a kept value that is not a URL', () => {
    const request = new Request('http://platform.test/health');
    Object.defineProperty(request, parsedUrl, { value: 'http://elsewhere.test/tasks' });
    assert.equal(requestUrlOf(request).href, 'http://platform.test/health');
  });
});
