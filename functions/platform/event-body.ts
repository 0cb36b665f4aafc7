import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/*
 * The body of a route with a streamed binaryBody, as one stream whatever carried it: on the local
 * server a temporary file the request was spooled to (never held in memory), in AWS the event's
 * own body (API Gateway has already buffered it). Handlers parse that stream the same way in both.
 */

const spooled = new WeakMap<APIGatewayProxyEvent, { path: string; size: number }>();

/** The local server hands over a spooled body with its event (the event's `body` stays null). */
export function attachBodyFile(event: APIGatewayProxyEvent, path: string, size: number): void {
  spooled.set(event, { path, size });
}

/** The body's size in bytes, without reading it. */
export function eventBodySize(event: APIGatewayProxyEvent): number {
  const file = spooled.get(event);
  if (file) return file.size;
  if (!event.body) return 0;
  return event.isBase64Encoded
    ? Buffer.byteLength(event.body, 'base64')
    : Buffer.byteLength(event.body, 'utf8');
}

/** The body as a stream, read once. */
export function eventBodyStream(event: APIGatewayProxyEvent): Readable {
  const file = spooled.get(event);
  if (file) return createReadStream(file.path);
  if (!event.body) return Readable.from([]);
  return Readable.from([Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')]);
}
