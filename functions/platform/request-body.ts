import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CarriedBodyMeter } from './carried-body-meter.ts';
import type { ReadBody } from './event-body.ts';
import { tempPrefix } from './temp-files.ts';

/*
 * Reading a request body on the local server, within a route's limit: the caller has already
 * refused a Content-Length over it, and reading stops at the first byte past it. A client that
 * disconnects mid-body is 'aborted' (nobody is left to answer). A body counted by a meter
 * (event-body-budget.ts) is 'too-large-event' as soon as it would not fit AWS's event.
 */

export type BodyFailure = 'too-large' | 'too-large-event' | 'aborted';

/**
 * The body in one Buffer. For an authenticated caller it is allocated once at the declared length;
 * an anonymous one gets no memory ahead of the bytes it actually sends (a declared length alone
 * must not reserve memory).
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  authenticated: boolean,
): Promise<Buffer | Exclude<BodyFailure, 'too-large-event'>>;
export async function readBody(
  req: IncomingMessage,
  limit: number,
  authenticated: boolean,
  meter: CarriedBodyMeter,
): Promise<Buffer | BodyFailure>;
export async function readBody(
  req: IncomingMessage,
  limit: number,
  authenticated: boolean,
  meter?: CarriedBodyMeter,
): Promise<Buffer | BodyFailure> {
  const declared = Number(req.headers['content-length']);
  const exact = authenticated && Number.isSafeInteger(declared) && declared >= 0 && declared <= limit;
  const whole = exact ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const c = chunk as Buffer;
      if (meter && !meter.add(c)) return 'too-large-event';
      if (size + c.length > limit) return 'too-large';
      if (whole && size + c.length <= whole.length) c.copy(whole, size);
      else chunks.push(c);
      size += c.length;
    }
  } catch {
    return 'aborted';
  }
  if (whole && chunks.length === 0) return size === whole.length ? whole : whole.subarray(0, size);
  return Buffer.concat([...(whole ? [whole.subarray(0, Math.min(size, whole.length))] : []), ...chunks]);
}

/**
 * The body of a route that takes none, read and dropped (never held) so the connection can serve
 * its next request: 'drained', or 'too-large' at the first byte past `limit`.
 */
export async function drainBody(req: IncomingMessage, limit: number): Promise<'drained' | BodyFailure> {
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit) return 'too-large';
    }
  } catch {
    return 'aborted';
  }
  return 'drained';
}

/**
 * A body whose declared length is at most this stays in memory instead of going to a file: a
 * temporary file costs five system calls and a directory entry per call (about a sixth of the
 * platform's CPU per prompt call in the gateway bench), and 64 KiB per request in flight is
 * nothing next to what a request already holds.
 */
export const IN_MEMORY_BODY_BYTES = 64 * 1024;

/**
 * The body of a streamed route: read into memory when its declared length is small
 * (IN_MEMORY_BODY_BYTES; the HTTP parser delivers no byte past a declared length), otherwise written
 * to a new temporary file (0600, in the system's temporary directory, named for this process:
 * temp-files.ts): its path and size. The caller removes the file once the request is over; on a
 * failure it is already gone.
 */
export async function spoolBody(
  req: IncomingMessage,
  limit: number,
  authenticated: boolean,
  meter?: CarriedBodyMeter,
): Promise<ReadBody | BodyFailure> {
  const declared = Number(req.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared >= 0 && declared <= Math.min(limit, IN_MEMORY_BODY_BYTES)) {
    const bytes = meter
      ? await readBody(req, limit, authenticated, meter)
      : await readBody(req, limit, authenticated);
    return typeof bytes === 'string' ? bytes : { bytes };
  }
  const path = join(tmpdir(), `${tempPrefix('body')}${randomUUID()}`);
  let size = 0;
  let over: BodyFailure | undefined;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (meter && !meter.add(chunk)) {
        over = 'too-large-event';
        done(new Error('too large'));
      } else if (size > limit) {
        over = 'too-large';
        done(new Error('too large'));
      } else done(null, chunk);
    },
  });
  try {
    await pipeline(req, count, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    return { path, size };
  } catch {
    await rm(path, { force: true });
    return over ?? 'aborted';
  }
}
