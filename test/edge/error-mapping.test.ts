/**
 * error-mapping.ts and error-answer.ts, called directly with the platform's real dependencies (in
 * memory): a PlatformError becomes the spec's status and envelope with the headers every answer
 * carries, Retry-After where a 429 or 503 suggests a wait, Allow on a 405, the bearer challenge on
 * a 401; an unexpected error is a 500 naming only the request id; a 5xx leaves one operator line.
 * mappedError is the path a streamed call's error takes too (streamed-call.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import { errorAnswer, mappedError } from '../../functions/edge/error-mapping.ts';
import { routes } from '../../functions/platform/routes.ts';
import { InvalidCursorError } from '../../functions/ports/store.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { SERVER_ERROR_MESSAGE } from '../../functions/shared/server-error-log.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ORIGIN = 'https://app.example';
type Envelope = {
  error: {
    code: string;
    message: string;
    is_retryable: boolean;
    suggested_wait_time?: number;
    details?: unknown;
  };
  metadata: { request_id: string; trace_id?: string };
};

describe('error mapping', () => {
  let platform: TestPlatform;
  let n = 0;
  before(async () => {
    platform = await startTestPlatform({ PLATFORM_CORS_ORIGINS: ORIGIN }, 'sqlite', {}, { inMemory: true });
  });
  after(() => platform.close());

  function scopeOf(extra: Partial<RequestScope> = {}): RequestScope {
    return {
      requestId: `req_errors_${++n}`,
      address: '192.0.2.2',
      waitUntil: () => {},
      origin: ORIGIN,
      deps: platform.deps,
      route: { id: 'forkAgent', def: routes.forkAgent },
      ...extra,
    };
  }
  const at = { method: 'POST', path: '/agents/agt_secret/fork' };
  const serverLines = (requestId: string) =>
    platform.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === SERVER_ERROR_MESSAGE && l.request_id === requestId);
  async function mapped(error: unknown, extra: Partial<RequestScope> = {}) {
    const scope = scopeOf(extra);
    const res = await errorAnswer(scope, error, at);
    return { scope, res, body: (await res.json()) as Envelope };
  }

  it('a PlatformError: its status and envelope, the common headers, no operator line', async () => {
    const err = new PlatformError('CONFLICT', 'Taken', {
      name: 'x',
      fields: [{ field: 'body.name', message: 'm' }],
    });
    const { scope, res, body } = await mapped(err);
    assert.equal(res.status, 409);
    assert.deepEqual(body, {
      error: { code: 'CONFLICT', message: 'Taken', is_retryable: false, details: err.details },
      metadata: { request_id: scope.requestId },
    });
    assert.equal(res.headers.get('x-request-id'), scope.requestId);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('retry-after'), null);
    assert.equal(serverLines(scope.requestId).length, 0);
  });

  it('a suggested wait: Retry-After on a 429 and a 503, at the envelope’s top level, not in details', async () => {
    const limited = await mapped(new PlatformError('RATE_LIMITED', 'Slow down', { suggested_wait_time: 7 }));
    assert.equal(limited.res.headers.get('retry-after'), '7');
    assert.equal(limited.body.error.suggested_wait_time, 7);
    assert.equal(limited.body.error.details, undefined);
    assert.equal(limited.body.error.is_retryable, true);

    const busy = await mapped(new PlatformError('SERVICE_UNAVAILABLE', 'Busy', { suggested_wait_time: 30 }));
    assert.equal(busy.res.status, 503);
    assert.equal(busy.res.headers.get('retry-after'), '30');

    const other = await mapped(new PlatformError('CONFLICT', 'Busy', { suggested_wait_time: 5 }));
    assert.equal(other.res.headers.get('retry-after'), null);
    const noWait = await mapped(new PlatformError('RATE_LIMITED', 'Slow down'));
    assert.equal(noWait.res.headers.get('retry-after'), null);
  });

  it('a 429 from a quota of its own shows that quota in X-RateLimit-*', async () => {
    const err = new PlatformError('RATE_LIMITED', 'Over', {
      quota: 'requests',
      limit: 60,
      reset: 1_900_000_000,
    });
    const { res } = await mapped(err);
    assert.equal(res.headers.get('x-ratelimit-limit'), '60');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(res.headers.get('x-ratelimit-reset'), '1900000000');
  });

  it('Allow on a 405 (the path’s methods), on no other answer', async () => {
    const refused = await mapped(new PlatformError('METHOD_NOT_ALLOWED', 'No'), { allow: ['GET', 'POST'] });
    assert.equal(refused.res.status, 405);
    assert.equal(refused.res.headers.get('allow'), 'GET, POST');
    const other = await mapped(new PlatformError('NOT_FOUND', 'No'), { allow: ['GET'] });
    assert.equal(other.res.headers.get('allow'), null);
  });

  it('a 401 carries the bearer challenge; a 403 does not', async () => {
    const { res } = await mapped(new PlatformError('UNAUTHORIZED', 'No key'));
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="agenthost"');
    const forbidden = await mapped(new PlatformError('FORBIDDEN', 'No'));
    assert.equal(forbidden.res.headers.get('www-authenticate'), null);
  });

  it('an unexpected error: a 500 naming only the request id, one error line with its cause', async () => {
    const cause = new Error('connection to db://user:hunter2@host refused');
    const { scope, res, body } = await mapped(cause, { gatewayRequestId: 'gw-1' });
    assert.equal(res.status, 500);
    assert.equal(body.error.code, 'INTERNAL_ERROR');
    assert.equal(body.error.message, `Internal error; quote request id ${scope.requestId} when reporting it`);
    assert.doesNotMatch(JSON.stringify(body), /hunter2/);
    const lines = serverLines(scope.requestId);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].level, 'error');
    assert.equal(lines[0].status, 500);
    assert.equal(lines[0].code, 'INTERNAL_ERROR');
    assert.equal(lines[0].route, routes.forkAgent.path, 'the template, never the path sent');
    assert.equal(lines[0].gateway_request_id, 'gw-1');
    assert.match(lines[0].error, /^Error: connection to db/);
  });

  it('a failed call’s trace: X-Trace-Id and metadata.trace_id, from a PlatformError or any error', async () => {
    const traced = new PlatformError('TIMEOUT', 'Late');
    traced.traceId = 'tr_a';
    const a = await mapped(traced);
    assert.equal(a.res.status, 504);
    assert.equal(a.res.headers.get('x-trace-id'), 'tr_a');
    assert.equal(a.body.metadata.trace_id, 'tr_a');
    const b = await mapped(Object.assign(new Error('boom'), { traceId: 'tr_b' }));
    assert.equal(b.res.headers.get('x-trace-id'), 'tr_b');
    assert.equal(b.body.metadata.trace_id, 'tr_b');
  });

  it('a cursor the store did not issue is 400 on query.cursor', async () => {
    const { res, body } = await mapped(new InvalidCursorError());
    assert.equal(res.status, 400);
    assert.deepEqual(body.error.details, {
      fields: [{ field: 'query.cursor', message: 'The cursor is not one this store issued' }],
    });
  });

  it('mappedError (a streamed call’s path): the PlatformError, logged once for a 5xx', () => {
    const requestId = `req_errors_${++n}`;
    const where = { requestId, method: 'POST', route: routes.callAgent.path };
    const err = mappedError(platform.deps.logger, new TypeError('bad'), where);
    assert.equal(err.code, 'INTERNAL_ERROR');
    assert.equal(serverLines(requestId).length, 1);
    const llm = mappedError(platform.deps.logger, new PlatformError('LLM_ERROR', 'Upstream'), where);
    assert.equal(llm.code, 'LLM_ERROR');
    const lines = serverLines(requestId);
    assert.equal(lines.length, 2);
    assert.equal(lines[1].level, 'warn');
    assert.equal(lines[1].error, undefined, 'a PlatformError is no unexpected cause');
    mappedError(platform.deps.logger, new PlatformError('NOT_FOUND', 'No'), where);
    assert.equal(serverLines(requestId).length, 2);
  });
});
