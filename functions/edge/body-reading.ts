import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformError } from '../shared/errors.ts';
import type { CarriedBodyMeter } from './carried-body-meter.ts';
import { readHostBody } from './host-body.ts';
import { tempPrefix } from './temp-files.ts';

/*
 * Reading a request's body from its Fetch API stream (or its host's own reading, where the host
 * offers one and the body stays in memory: host-body.ts), within a route's limit: reading stops at the
 * first byte past it, and what is left is never read (the Node shell closes such a connection
 * after the answer: node-shell.ts). Every body is counted as AWS's Lambda event would carry it
 * (carried-body-meter.ts), so the same bodies fit on both deployments.
 */

/** A body read whole: a small one's bytes, or the temporary file a large one was spooled to. */
export type ReadBody = { bytes: Buffer } | { path: string; size: number };

/** The client went away before its body was read whole: nobody is left to answer. */
export class ClientGone extends Error {
  constructor() {
    super('The client closed the connection before its body was read');
  }
}

/**
 * A body whose declared length is at most this stays in memory instead of going to a file: a
 * temporary file costs five system calls and a directory entry per call (docs/performance.md,
 * "Call gateway overhead", item 1), and 64 KiB per request in flight is
 * nothing next to what a request already holds.
 */
export const IN_MEMORY_BODY_BYTES = 64 * 1024;

/** How one body is bounded: the route's limit in bytes, AWS's event budget, and their refusals. */
export interface BodyBounds {
  limit: number;
  meter: CarriedBodyMeter;
  refusal: (failure: 'too-large' | 'too-large-event') => PlatformError;
}

/**
 * Reads `request`'s body chunk by chunk, checked against `bounds` (throws the refusal at the first
 * chunk past them), handing each to `take`. A plain loop, not an async generator: this runs once a
 * request, and each generator step costs promises the garbage collector has to follow.
 */
async function eachChunk(
  request: Request,
  bounds: BodyBounds | { limit: number },
  take: (chunk: Buffer) => void | Promise<void>,
): Promise<void> {
  if (!request.body) return;
  const reader = request.body.getReader();
  let size = 0;
  let ended = false;
  try {
    for (;;) {
      let read: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
      try {
        read = await reader.read();
      } catch {
        throw new ClientGone();
      }
      if (read.done) {
        ended = true;
        return;
      }
      const chunk = Buffer.isBuffer(read.value)
        ? read.value
        : Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength);
      size += chunk.length;
      if ('meter' in bounds && !bounds.meter.add(chunk)) throw bounds.refusal('too-large-event');
      if (size > bounds.limit) throw 'refusal' in bounds ? bounds.refusal('too-large') : new BodyOverLimit();
      const taken = take(chunk);
      if (taken) await taken;
    }
  } finally {
    // A body left before its end is cancelled: the Node shell's stream then lets go of the
    // request, whose rest the shell drains within its bound as the connection closes
    // (lingering-close.ts), and nothing more of it is buffered.
    if (ended) reader.releaseLock();
    else void reader.cancel().catch(() => undefined);
  }
}

/** A dropped body past its bound (drainBody's caller answers it). */
export class BodyOverLimit extends Error {}

/**
 * As eachChunk, for a `take` that holds or drops each chunk at once: through the host's own
 * reading where the request offers it (host-body.ts), else from its stream. The same checks in
 * the same order: the first chunk past the bounds stops the reading, and the rest is left unread.
 */
async function eachChunkAtOnce(
  request: Request,
  bounds: BodyBounds | { limit: number },
  take: (chunk: Buffer) => void,
): Promise<void> {
  let size = 0;
  let refusal: unknown;
  const reading = readHostBody(request, (chunk) => {
    size += chunk.length;
    if ('meter' in bounds && !bounds.meter.add(chunk)) refusal = bounds.refusal('too-large-event');
    else if (size > bounds.limit)
      refusal = 'refusal' in bounds ? bounds.refusal('too-large') : new BodyOverLimit();
    else {
      take(chunk);
      return true;
    }
    return false;
  });
  if (!reading) return eachChunk(request, bounds, take);
  try {
    await reading;
  } catch {
    throw new ClientGone();
  }
  if (refusal !== undefined) throw refusal;
}

/** The body in one Buffer. */
export async function readBody(request: Request, bounds: BodyBounds): Promise<Buffer> {
  const parts: Buffer[] = [];
  await eachChunkAtOnce(request, bounds, (chunk) => void parts.push(chunk));
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}

/**
 * The body of a route that takes none, read and dropped (never held) so the connection can serve
 * its next request; throws BodyOverLimit at the first byte past `limit`.
 */
export async function drainBody(request: Request, limit: number): Promise<void> {
  await eachChunkAtOnce(request, { limit }, () => undefined);
}

/**
 * The body of a streamed route: in memory when the shell holds it there already or its declared
 * length is small (IN_MEMORY_BODY_BYTES), otherwise written to a new temporary file (0600, in the
 * system's temporary directory, named for this process: temp-files.ts). The caller removes the
 * file once the request is over; on a failure it is already gone.
 */
export async function spoolBody(request: Request, bounds: BodyBounds, inMemory: boolean): Promise<ReadBody> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  const small = Number.isSafeInteger(declared) && declared >= 0 && declared <= IN_MEMORY_BODY_BYTES;
  if (inMemory || small) return { bytes: await readBody(request, bounds) };
  const path = join(tmpdir(), `${tempPrefix('body')}${randomUUID()}`);
  const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  // An error of the file (a full disk, or a write that was in flight when the body failed and the
  // file was destroyed) is the failure of this read, never an uncaught event.
  let fileError: Error | undefined;
  file.on('error', (err) => {
    fileError ??= err;
  });
  let size = 0;
  try {
    await eachChunk(request, bounds, (chunk) => {
      size += chunk.length;
      if (fileError) throw fileError;
      if (!file.write(chunk)) return drained(file);
    });
    await new Promise<void>((resolve, reject) =>
      file.end((err?: Error | null) => (err ? reject(err) : resolve())),
    );
    return { path, size };
  } catch (err) {
    if (!file.closed) await new Promise<void>((resolve) => file.destroy().once('close', () => resolve()));
    await rm(path, { force: true });
    throw err;
  }
}

function drained(file: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      file.off('drain', done);
      file.off('error', done);
      err ? reject(err) : resolve();
    };
    file.once('drain', done);
    file.once('error', done);
  });
}
