import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/*
 * The body of a route with a streamed binaryBody, whatever carried it: on the local server the
 * bytes it read (a small body) or the temporary file it spooled a large one to (never held in
 * memory), in AWS the event's own body (API Gateway has already buffered it). Handlers take bytes
 * or a stream the same way in both (parseCallBody).
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

/**
 * The body, read once: its bytes where they are in memory already (a small body the local server
 * read, API Gateway's event body), so a JSON call is parsed without stream machinery (about 25 µs
 * a call); otherwise a stream of the file a large body was spooled to.
 */
export function eventBodySource(event: APIGatewayProxyEvent): Buffer | Readable {
  const read = attached.get(event);
  if (read) return 'bytes' in read ? read.bytes : createReadStream(read.path);
  if (!event.body) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}
