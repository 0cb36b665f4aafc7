/**
 * operation-input.ts, called directly with routes of the test's own: path parameters, query and
 * JSON body checked against the route's zod schemas, every issue reported with its field; the body's
 * type refused before its JSON is read; a binary body handed on as bytes or a stream.
 */
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { parseInput, type RawInput, type StreamBody } from '../../functions/edge/operation-input.ts';
import type { RouteDef } from '../../functions/platform/routes.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

const base = {
  method: 'POST',
  path: '/things/{id}',
  module: 'tasks',
  auth: 'api-key',
  summary: 's',
  tag: 'T',
};
const route = {
  ...base,
  params: z.object({ id: z.string().startsWith('thg_') }),
  query: z.strictObject({ limit: z.coerce.number().int().max(10).optional() }),
  body: z.strictObject({ title: z.string(), tags: z.array(z.string()).optional() }),
  success: { status: 200, description: 'ok' },
} as unknown as RouteDef;

const JSON_TYPE = 'application/json';
function raw(over: Partial<RawInput> & { q?: string; json?: unknown } = {}): RawInput {
  return {
    params: { id: 'thg_1' },
    query: new URLSearchParams(over.q ?? ''),
    body: over.json === undefined ? undefined : Buffer.from(JSON.stringify(over.json)),
    contentType: JSON_TYPE,
    ...over,
  };
}
function refusal(fn: () => unknown): PlatformError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PlatformError);
    return err;
  }
  assert.fail('not refused');
}
const fieldsOf = (err: PlatformError) => (err.details?.fields ?? []).map((f) => f.field);

describe('parseInput', () => {
  it('the parsed params, query and body, as the schemas output them', () => {
    const input = parseInput(route, raw({ q: 'limit=3', json: { title: 't' } }));
    assert.deepEqual(input, { params: { id: 'thg_1' }, query: { limit: 3 }, body: { title: 't' } });
  });

  it('every issue, each with its field, in one 400', () => {
    const err = refusal(() =>
      parseInput(route, raw({ params: { id: 'x' }, q: 'limit=99&page=2', json: { tags: [1], extra: 1 } })),
    );
    assert.equal(err.code, 'INVALID_INPUT');
    assert.deepEqual(fieldsOf(err).sort(), [
      'body.extra',
      'body.tags.0',
      'body.title',
      'path.id',
      'query.limit',
      'query.page',
    ]);
    assert.match(err.message, /^Invalid input: /);
  });

  it('a query parameter given twice is an issue; the last value is the one checked', () => {
    const err = refusal(() => parseInput(route, raw({ q: 'limit=1&limit=2', json: { title: 't' } })));
    assert.deepEqual(err.details?.fields, [{ field: 'query.limit', message: 'must be given at most once' }]);
    const names = refusal(() =>
      parseInput(route, raw({ q: 'constructor=1&__proto__=2', json: { title: 't' } })),
    );
    assert.deepEqual(fieldsOf(names).sort(), ['query.__proto__', 'query.constructor']);
  });

  it('a route without a query schema ignores the query', () => {
    const plain = { ...route, query: undefined } as RouteDef;
    assert.deepEqual(parseInput(plain, raw({ q: 'anything=1', json: { title: 't' } })).query, {});
  });

  it('an empty body is {} to the schema (and is no type error)', () => {
    const err = refusal(() => parseInput(route, raw({ body: Buffer.from('  \n'), contentType: undefined })));
    assert.deepEqual(fieldsOf(err), ['body.title']);
  });

  it('a body that is not JSON by its type: 415 on header.content-type, before its text is parsed', () => {
    for (const contentType of [undefined, 'text/plain', 'application/jsonp']) {
      const err = refusal(() => parseInput(route, raw({ body: Buffer.from('not json'), contentType })));
      assert.equal(err.code, 'UNSUPPORTED_TYPE');
      assert.deepEqual(fieldsOf(err), ['header.content-type']);
    }
    for (const contentType of [
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/merge-patch+json',
    ])
      assert.deepEqual(parseInput(route, raw({ json: { title: 't' }, contentType })).body, { title: 't' });
  });

  it('JSON that does not parse is 400 on body, quoting none of it', () => {
    const err = refusal(() => parseInput(route, raw({ body: Buffer.from('{"title": secret-value') })));
    assert.equal(err.code, 'INVALID_INPUT');
    assert.deepEqual(fieldsOf(err), ['body']);
    assert.doesNotMatch(JSON.stringify(err.details), /secret-value/);
  });

  it('a binary body is handed on as its bytes and type, unchecked', () => {
    const binary = {
      ...route,
      body: undefined,
      binaryBody: { maxBytes: 9, contentTypes: ['application/zip'] },
    };
    const input = parseInput(
      binary as RouteDef,
      raw({ body: Buffer.from('PK'), contentType: 'application/zip' }),
    );
    assert.deepEqual(input.body, { data: Buffer.from('PK'), contentType: 'application/zip' });
  });

  it('a streamed body: its bytes when in memory, a stream of its file when spooled', async () => {
    const streamed = {
      ...route,
      body: undefined,
      binaryBody: { maxBytes: 9, contentTypes: [], stream: true },
    };
    const inMemory = parseInput(streamed as RouteDef, raw({ body: { bytes: Buffer.from('ab') } }));
    assert.deepEqual((inMemory.body as StreamBody).source, Buffer.from('ab'));
    const path = join(tmpdir(), `operation-input-${process.pid}`);
    await writeFile(path, 'from the file');
    try {
      const spooled = parseInput(streamed as RouteDef, raw({ body: { path, size: 13 } }));
      const chunks: Buffer[] = [];
      for await (const chunk of (spooled.body as StreamBody).source as Readable) chunks.push(chunk);
      assert.equal(Buffer.concat(chunks).toString(), 'from the file');
    } finally {
      await rm(path, { force: true });
    }
  });
});
