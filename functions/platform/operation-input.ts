import type { Readable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { z } from 'zod';
import { EVENT_BODY_BYTES } from '../shared/byte-limits.ts';
import { clientKeyed } from '../shared/client-keyed.ts';
import {
  bodyTooLarge,
  type FieldIssue,
  invalidInput,
  PlatformError,
  parseJsonBody,
} from '../shared/errors.ts';
import { eventBodySize, eventBodySource } from './event-body.ts';
import { eventBodyCarriedBytes, eventBodyTooLarge } from './event-body-budget.ts';
import { header } from './request-header.ts';
import type { RouteDef } from './routes.ts';

/** The body of a route with `binaryBody`. */
export interface BinaryBody {
  data: Buffer;
  contentType: string | undefined;
}

/**
 * The body of a route with a streamed `binaryBody` (event-body.ts): its bytes when they are in
 * memory already, a stream when the local server spooled it to a file.
 */
export interface StreamBody {
  source: Buffer | Readable;
  contentType: string | undefined;
}

/** An event's path parameters, query and body, checked against its route's schemas (400 naming each field). */
export function parseInput(event: APIGatewayProxyEvent, route: RouteDef, maxBodyBytes: number) {
  const issues: FieldIssue[] = [];
  const params = validate(route.params, event.pathParameters ?? {}, 'path', issues);

  const rawQuery = clientKeyed<string>();
  for (const [k, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (!values) continue;
    if (values.length > 1) issues.push({ field: `query.${k}`, message: 'must be given at most once' });
    rawQuery[k] = values[values.length - 1] as string;
  }
  if (!event.multiValueQueryStringParameters) Object.assign(rawQuery, event.queryStringParameters ?? {});
  const query = validate(route.query, rawQuery, 'query', issues, true);

  // AWS's own limit first, as API Gateway and Lambda apply it before a route's (the last 64 KiB
  // below Lambda's 6 MiB reach the function and are refused here with the same answer).
  if (eventBodyCarriedBytes(event) > EVENT_BODY_BYTES) throw eventBodyTooLarge();
  let body: unknown;
  if (route.binaryBody?.stream) {
    if (eventBodySize(event) > route.binaryBody.maxBytes) throw bodyTooLarge(route.binaryBody.maxBytes);
    body = {
      source: eventBodySource(event),
      contentType: header(event, 'content-type'),
    } satisfies StreamBody;
  } else if (route.binaryBody) {
    const data = event.body
      ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
      : Buffer.alloc(0);
    if (data.length > route.binaryBody.maxBytes) throw bodyTooLarge(route.binaryBody.maxBytes);
    body = { data, contentType: header(event, 'content-type') } satisfies BinaryBody;
  } else if (route.body) {
    const text = event.body
      ? event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body
      : '';
    if (Buffer.byteLength(text, 'utf8') > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
    let raw: unknown = {};
    if (text.trim() !== '') {
      const type = header(event, 'content-type') ?? '';
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
      raw = parseJsonBody(text);
    }
    body = validate(route.body, raw, 'body', issues);
  }
  if (issues.length > 0) throw invalidInput(issues);
  return { params, query, body };
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
