import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/*
 * The body of a route with a streamed binaryBody, as one stream whatever carried it: on the local
 * server the bytes it read (a small body) or the temporary file it spooled a large one to (never
 * held in memory), in AWS the event's own body (API Gateway has already buffered it). Handlers
 * parse that stream the same way in both.
 */

/** What the local server read: a small body's bytes, or the file a large one was spooled to. */
export type ReadBody = { bytes: Buffer } | { path: string; size: number };

const attached = new WeakMap<APIGatewayProxyEvent, ReadBody>();

/** The local server hands over the body it read with its event (the event's `body` stays null). */
export function attachBody(event: APIGatewayProxyEvent, body: ReadBody): void {
  attached.set(event, body);
}

/** The body's size in bytes, without reading it. */
export function eventBodySize(event: APIGatewayProxyEvent): number {
  const read = attached.get(event);
  if (read) return 'bytes' in read ? read.bytes.length : read.size;
  if (!event.body) return 0;
  return event.isBase64Encoded
    ? Buffer.byteLength(event.body, 'base64')
    : Buffer.byteLength(event.body, 'utf8');
}

/** The body as a stream, read once. */
export function eventBodyStream(event: APIGatewayProxyEvent): Readable {
  const read = attached.get(event);
  if (read) return 'bytes' in read ? Readable.from([read.bytes]) : createReadStream(read.path);
  if (!event.body) return Readable.from([]);
  return Readable.from([Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')]);
}
