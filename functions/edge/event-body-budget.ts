import { EVENT_BODY_BYTES } from '../shared/byte-limits.ts';
import { PlatformError } from '../shared/errors.ts';

/*
 * One size limit for a request body on both deployments, counted the way AWS counts it.
 *
 * On AWS a request reaches its function as a Lambda event, and a synchronous invocation's payload
 * is at most 6 MiB (6,291,456 bytes) of JSON. The body sits in that JSON as a string: a text body
 * (JSON) with its escaping (each `"` and `\` takes two bytes, a newline or tab two, another control
 * character six), a binary body (the API's binary media types: multipart, archives) as base64
 * (four bytes for every three). So what AWS can carry depends on the content: 6 MB of ordinary
 * JSON fits, 3.4 MB of quotes does not. The local server counts every body the same way against
 * the same budget (EVENT_BODY_BYTES, shared/byte-limits.ts; carried-body-meter.ts), so a body
 * accepted on `npm start` is accepted on AWS and a body refused on one is refused on the other,
 * with the same 413. Routes with smaller limits (1 MiB for platform JSON)
 * keep them, in raw bytes.
 */

/** What of an API Gateway proxy event's fields this counts (the edge names no Lambda type). */
export interface CarriedEventBody {
  body: string | null;
  isBase64Encoded: boolean;
}

/**
 * An event's body counted as it is carried: AWS's event as API Gateway made it (the local server's
 * large bodies are not in the event, and it counted them as it read them). A body that fits for
 * certain answers its length, uncounted.
 */
export function eventBodyCarriedBytes(event: CarriedEventBody): number {
  const body = event.body;
  if (!body) return 0;
  // base64 text is ASCII: one byte a character.
  if (event.isBase64Encoded) return body.length;
  // A character is at most 3 bytes of UTF-8 and at most 6 escaped: a short body is not measured.
  if (body.length * 6 <= EVENT_BODY_BYTES) return body.length;
  return Buffer.byteLength(JSON.stringify(body)) - 2;
}

/**
 * The one answer for a body past the budget, on both deployments: API Gateway's own 413 (the
 * REQUEST_TOO_LARGE gateway response, lib/gateway-responses.ts) gives this message and these
 * details too, since what AWS refuses before the function runs never reaches the platform's code.
 */
export const EVENT_BODY_TOO_LARGE_MESSAGE = `The request body exceeds ${EVENT_BODY_BYTES.toLocaleString('en-US')} bytes as it is carried to the platform: a JSON or text body counts with its JSON escaping (a quote or backslash twice), a binary body (multipart, an archive) as base64, 4 bytes for every 3 (docs/limits.md)`;

export function eventBodyTooLarge(): PlatformError {
  return new PlatformError('DOCUMENT_TOO_LARGE', EVENT_BODY_TOO_LARGE_MESSAGE, {
    fields: [{ field: 'body', message: `must be at most ${EVENT_BODY_BYTES} bytes as carried` }],
    limit_bytes: EVENT_BODY_BYTES,
  });
}
