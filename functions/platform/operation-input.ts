import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { clientKeyed } from '../shared/client-keyed.ts';
import { type FieldIssue, invalidInput, PlatformError, parseJsonBody } from '../shared/errors.ts';
import type { ReadBody } from './edge/body-reading.ts';
import type { RouteDef } from './routes.ts';

/** The body of a route with `binaryBody`. */
export interface BinaryBody {
  data: Buffer;
  contentType: string | undefined;
}

/**
 * The body of a route with a streamed `binaryBody`: its bytes when they are in memory already (a
 * small body, or API Gateway's), a stream when the Node shell's body was spooled to a file.
 */
export interface StreamBody {
  source: Buffer | Readable;
  contentType: string | undefined;
}

/** A request's raw parts, as the edge read them (edge/serve-route.ts). */
export interface RawInput {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The body read for a route that takes one: its bytes, or (streamed routes) bytes or a file. */
  body: Buffer | ReadBody | undefined;
  contentType: string | undefined;
}

/** A request's path parameters, query and body, checked against its route's schemas (400 naming each field). */
export function parseInput(route: RouteDef, raw: RawInput) {
  const issues: FieldIssue[] = [];
  const params = validate(route.params, raw.params, 'path', issues);

  const rawQuery = clientKeyed<string>();
  for (const k of new Set(raw.query.keys())) {
    const values = raw.query.getAll(k);
    if (values.length > 1) issues.push({ field: `query.${k}`, message: 'must be given at most once' });
    rawQuery[k] = values[values.length - 1] as string;
  }
  const query = validate(route.query, rawQuery, 'query', issues, true);

  let body: unknown;
  const read = raw.body ?? Buffer.alloc(0);
  if (route.binaryBody?.stream) {
    const source = Buffer.isBuffer(read) ? read : 'bytes' in read ? read.bytes : createReadStream(read.path);
    body = { source, contentType: raw.contentType } satisfies StreamBody;
  } else if (route.binaryBody) {
    body = { data: asBytes(read), contentType: raw.contentType } satisfies BinaryBody;
  } else if (route.body) {
    const text = asBytes(read).toString('utf8');
    let json: unknown = {};
    if (text.trim() !== '') {
      const type = raw.contentType ?? '';
      if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
        throw new PlatformError(
          'UNSUPPORTED_TYPE',
          'The request body must be JSON (Content-Type: application/json)',
          {
            fields: [
              { field: 'header.content-type', message: `must be application/json, got "${type || 'none'}"` },
            ],
          },
        );
      }
      json = parseJsonBody(text);
    }
    body = validate(route.body, json, 'body', issues);
  }
  if (issues.length > 0) throw invalidInput(issues);
  return { params, query, body };
}

function asBytes(read: Buffer | ReadBody): Buffer {
  if (Buffer.isBuffer(read)) return read;
  if ('bytes' in read) return read.bytes;
  throw new Error('A route that takes its body in memory was handed a spooled file');
}

function validate(
  schema: z.ZodType | undefined,
  value: unknown,
  source: string,
  issues: FieldIssue[],
  lenientWhenAbsent = false,
): unknown {
  if (!schema) return lenientWhenAbsent ? {} : value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const path = [source, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ field: `${path}.${key}`, message: 'is not a known field' });
    } else {
      issues.push({ field: path, message: issue.message });
    }
  }
  return undefined;
}
