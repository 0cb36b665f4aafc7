import type { ServerResponse } from 'node:http';
import { INLINE_OUTPUT_BYTES } from '../core/payloads/output-answer.ts';
import { PlatformError } from '../shared/errors.ts';

/*
 * What the local server's answers hold while their clients do not read them: a connection whose
 * client stops reading keeps every byte written to it in the process, so a few hundred such
 * connections asking for a large page would hold gigabytes (bench:unread-answers). So
 * (docs/http.md, "Answers a client does not read"):
 *
 * - a large answer is written a slice at a time, the next once the connection has taken the last
 *   (a streamed answer's events already wait for that: streamed-call.ts), so the bytes queued in a
 *   connection stay under a slice or so, and an answer not yet taken whole by the network is
 *   counted whole (its body is held until then);
 * - the bytes of answers not yet taken by the network are counted per client address and in all:
 *   a large answer that would take its address past `perAddressBytes`, or the server past
 *   `totalBytes`, is refused with 429 instead, and an address left without room for one more
 *   answer of the largest size (a page, an inline output) has its next requests refused before
 *   they run (building a 6 MB page is the costly part). Small answers (SMALL_ANSWER_BYTES) of other
 *   addresses always go out, so a health check or another client's small request is never refused
 *   for someone else's load;
 * - a connection that takes nothing of its answer for `writeTimeoutMs` is closed, which frees what
 *   it held and ends a streamed call as a client that hung up does.
 */

/** An answer at most this large is always written (it is a slice, and a health check's is tiny). */
export const SMALL_ANSWER_BYTES = 64 * 1024;
/** A larger body goes out this much at a time, the next slice once the connection has taken it. */
export const ANSWER_SLICE_BYTES = 64 * 1024;

export interface UnreadAnswerLimits {
  /** Bytes of answers one client address may have waiting to be read (PLATFORM_MAX_UNREAD_BYTES_PER_ADDRESS). */
  perAddressBytes: number;
  /** Bytes of answers all clients together may have waiting (PLATFORM_MAX_UNREAD_BYTES). */
  totalBytes: number;
  /** A connection whose client takes nothing of its answer for this long is closed (PLATFORM_WRITE_TIMEOUT_MS). */
  writeTimeoutMs: number;
}

/** The local server's count of answers written and not yet read, per client address and in all. */
export class UnreadAnswers {
  private held = 0;
  private readonly byAddress = new Map<string, number>();
  readonly limits: UnreadAnswerLimits;

  constructor(limits: UnreadAnswerLimits) {
    this.limits = limits;
  }

  /** Bytes of answers not yet taken by the network, in all (what the tests and the bench read). */
  get bytes(): number {
    return this.held;
  }

  /** Bytes of `address`'s answers not yet taken by the network. */
  bytesOf(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  /**
   * Whether `address` holds so much unread that the largest answer would not fit beside it: its
   * next requests are refused before they run, so a client that reads nothing does not have the
   * server build pages only to refuse them.
   */
  full(address: string): boolean {
    const held = this.bytesOf(address);
    return held > 0 && held + INLINE_OUTPUT_BYTES > this.limits.perAddressBytes;
  }

  /** Whether an answer of `bytes` for `address` may be written now. */
  fits(address: string, bytes: number): boolean {
    if (bytes <= SMALL_ANSWER_BYTES) return true;
    return (
      this.bytesOf(address) + bytes <= this.limits.perAddressBytes &&
      this.held + bytes <= this.limits.totalBytes
    );
  }

  /** The 429 of a request refused because answers already wait for their readers. */
  refusal(): PlatformError {
    // The wait that lets a stalled client's answers go: its connections are closed by then.
    const wait = Math.max(1, Math.ceil(this.limits.writeTimeoutMs / 1000));
    return new PlatformError(
      'RATE_LIMITED',
      `Too many answers are waiting for their clients to read them; read those, or retry in ${wait} s`,
      { suggested_wait_time: wait, quota: 'unread_answers' },
    );
  }

  /**
   * The writer of one answer to `res` (for `address`), which counts it until the network has taken
   * it and closes a connection that takes nothing of it for `writeTimeoutMs`.
   */
  writer(res: ServerResponse, address: string): AnswerWriter {
    return new AnswerWriter(this, res, address);
  }

  /**
   * After a small answer was written whole with `res.end`: if the connection has not taken it all
   * (its client is not reading), it is counted and timed like any other until it has.
   */
  ended(res: ServerResponse, address: string): void {
    if (res.writableLength > 0) new AnswerWriter(this, res, address).sync();
  }

  /** Adds `delta` bytes to `address`'s count and the total. */
  add(address: string, delta: number): void {
    if (delta === 0) return;
    this.held += delta;
    const now = (this.byAddress.get(address) ?? 0) + delta;
    if (now <= 0) this.byAddress.delete(address);
    else this.byAddress.set(address, now);
  }
}

/**
 * One answer as it is written: its bytes not yet handed to the connection and those the
 * connection has not yet given the network (`res.writableLength`), counted in UnreadAnswers, and
 * the write timeout, which runs while the connection is full (its client reading nothing) and
 * stops each time the connection drains.
 */
export class AnswerWriter {
  private readonly owner: UnreadAnswers;
  private readonly res: ServerResponse;
  private readonly address: string;
  /**
   * A body written a slice at a time is held whole until the network has taken its last slice (the
   * slices are views of it), so it is counted whole until then.
   */
  private whole = 0;
  /** What this answer adds to the owner's counts now. */
  private counted = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private watching = false;

  constructor(owner: UnreadAnswers, res: ServerResponse, address: string) {
    this.owner = owner;
    this.res = res;
    this.address = address;
  }

  /** Writes a body of one piece: a slice at a time when it is large, each once the last was taken. */
  async body(body: Uint8Array): Promise<void> {
    if (body.byteLength <= ANSWER_SLICE_BYTES) return this.end(body);
    this.whole = body.byteLength;
    for (let at = 0; at < body.byteLength; at += ANSWER_SLICE_BYTES) {
      if (this.closed || this.res.destroyed) return this.sync();
      const slice = body.subarray(at, at + ANSWER_SLICE_BYTES);
      if (at + slice.byteLength >= body.byteLength) return this.end(slice);
      if (!this.write(slice)) await this.drained();
    }
  }

  /** Writes a chunk of a streamed body (a large one a slice at a time), waiting while the connection is full. */
  async chunk(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.byteLength; at += ANSWER_SLICE_BYTES) {
      if (this.closed || this.res.destroyed) return;
      if (!this.write(chunk.subarray(at, at + ANSWER_SLICE_BYTES))) await this.drained();
    }
  }

  /** Ends the answer (with its last bytes, if any). */
  end(last?: Uint8Array): void {
    this.res.end(last);
    this.sync();
  }

  /** Counts the answer as it stands now; watches it while bytes wait. */
  sync(): void {
    // A response already destroyed holds nothing, and its 'close' may have gone by before this
    // writer watched it (a client gone while a streamed body's first chunk was awaited): counted,
    // its bytes would never be taken off, and enough such would lock its address out for good.
    const gone = this.closed || this.res.destroyed || this.res.writableFinished;
    const now = gone ? 0 : this.whole + this.res.writableLength;
    this.owner.add(this.address, now - this.counted);
    this.counted = now;
    if (now > 0) this.watch();
    // The clock runs only while the connection is full (what was written waits for the client to
    // read: a drain, or the end's finish, is the client taking it). Bytes waiting behind a connection
    // that is not full are being taken: a stream that writes a little every few seconds to a client
    // that reads it is no stalled client, whatever time passes between its events.
    const stalled =
      !gone && (this.res.writableNeedDrain || (this.res.writableEnded && this.res.writableLength > 0));
    if (stalled) this.arm();
    else if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private write(chunk: Uint8Array): boolean {
    const ok = this.res.write(chunk);
    this.sync();
    return ok;
  }

  /** Resolves once the connection has taken what it was given, or is gone. */
  private drained(): Promise<void> {
    if (this.closed || this.res.destroyed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done).off('close', done);
        resolve();
      };
      this.res.on('drain', done).on('close', done);
    });
  }

  /** Starts the write timeout, unless it runs already (a stall is timed from its start). */
  private arm(): void {
    if (this.timer) return;
    // A client that takes nothing for the timeout is gone in all but name: its connection is
    // closed, which frees what it held and ends a streamed call as a hang-up does. Reset, not
    // closed with a FIN: a FIN would wait behind the bytes the client is not reading, and the
    // kernel would keep them (megabytes a connection) until it gave up on them.
    this.timer = setTimeout(() => {
      const socket = this.res.socket;
      if (socket && !socket.destroyed) socket.resetAndDestroy();
      else this.res.destroy();
    }, this.owner.limits.writeTimeoutMs);
    this.timer.unref();
  }

  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    // The client read: the connection is no longer full, and the timeout stops until it is again.
    const drain = () => this.sync();
    this.res.on('drain', drain);
    // Written whole (the network took every byte), or the connection closed (whatever was left of
    // the answer is dropped with it).
    this.res.once('finish', () => this.sync());
    this.res.once('close', () => {
      this.closed = true;
      this.res.off('drain', drain);
      this.sync();
    });
  }
}
