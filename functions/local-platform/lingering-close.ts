import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A refused request's body is read and dropped up to this much after its answer. */
export const DRAIN_BYTES = 1024 * 1024;
/**
 * Connections drained up to DRAIN_BYTES at once; a refusal past them is drained up to
 * SHORT_DRAIN_BYTES only. Every byte drained is a buffer the garbage collector frees late (V8
 * collects for external memory only some 64 MB past its last collection), so without this a flood
 * of refused uploads (1,500 keyless connections sending 1 MB each: bench:body-memory) costs
 * about as much resident memory as the GC's lag, over 100 MB. An ordinary client is never among
 * more than a few refusals at once, so it keeps the full drain.
 */
export const FULL_DRAINS_AT_ONCE = 16;
/** What a refused connection past FULL_DRAINS_AT_ONCE has read and dropped, at most. */
export const SHORT_DRAIN_BYTES = 16 * 1024;

/**
 * The close of a connection whose request was refused before its body was read (no valid key, a
 * declared size over the limit, a body that crossed it), done so the client gets its answer.
 *
 * Node closes a `Connection: close` socket as soon as the answer is written, and closing a socket
 * with unread bytes sends a reset. A client still uploading then fails its next write, and often
 * never reads the answer already in its buffer: the bench's clients saw `EPIPE` instead of 401 in
 * most runs, and a client that sends its whole body before reading (most HTTP libraries) sees
 * "connection reset" every time. So, as web servers do (nginx's lingering close), after the answer
 * the server's side is ended (FIN) and the body is read and dropped while the connection has
 * delivered at most DRAIN_BYTES since the refusal: a client that sends a body of ordinary size
 * finishes it, and the connection then closes cleanly. Past that nothing more is read (the
 * client's writes wait on a full window, costing nothing), and the connection is closed `lingerMs`
 * (PLATFORM_LINGER_MS, default 5 s) after the answer, by which time the client has read it. Nothing of the body is kept, no refused
 * caller can make the server read more than about DRAIN_BYTES, and a request sent behind the
 * refused one is not run (local-server.ts).
 * A chunked body that crossed its limit is read no further by Node, so its client gets the answer
 * if it reads while it uploads; one that sends all before reading loses it, as before.
 */
export class LingeringClose {
  private readonly sockets = new Set<Socket>();
  private readonly lingerMs: number;

  constructor(lingerMs: number) {
    this.lingerMs = lingerMs;
  }

  /** Connections holding one of the FULL_DRAINS_AT_ONCE, until their body ends or they close. */
  private fullDrains = 0;

  /**
   * Call before the refusal's answer is written, with `Connection: close` set on it. Node ends such
   * a connection through the socket's `destroySoon` once the answer is out; this socket's own
   * replaces it.
   */
  closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
    // The request's socket, not the answer's: an answer queued behind a pipelined one has none yet.
    const socket = req.socket ?? res.socket;
    if (!socket || socket.destroyed) return;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    // The bound is on bytes off the wire, not body bytes: a chunked body's framing (chunk sizes,
    // extensions of up to 16 KiB each) would otherwise let a 1-byte-per-chunk body be read for
    // gigabytes. Past it reading stops: the socket is paused, and the request, which resumes its
    // socket whenever it wants more (its _read), wants no more. The client's writes then wait on a
    // full window until the linger ends. (Closing at the bound instead reset the connection a
    // mebibyte after the answer, a millisecond on loopback: the bench's clients lost it again.)
    const readBefore = socket.bytesRead;
    const bound = this.drainBound(req, socket);
    const stopReading = () => {
      if (socket.bytesRead - readBefore <= bound) return;
      req.off('data', stopReading);
      req.pause();
      req._read = () => undefined;
      socket.pause();
    };
    req.on('error', () => undefined);
    req.on('data', stopReading);
    req.resume();
    const closeWhenWritten = socket.destroySoon.bind(socket);
    let ending = false;
    socket.destroySoon = () => {
      if (ending) return;
      ending = true;
      // A body read whole leaves nothing unread: the close is clean at once.
      if (req.complete) return closeWhenWritten();
      socket.end();
      // Closed at the timer, or once the body has been read whole. (A request Node has destroyed,
      // its chunked body over the limit, delivers nothing more: only the timer closes it.)
      const timer = setTimeout(() => socket.destroy(), this.lingerMs);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      req.once('end', closeWhenWritten);
    };
  }

  /**
   * DRAIN_BYTES while fewer than FULL_DRAINS_AT_ONCE connections hold it, SHORT_DRAIN_BYTES past
   * them. The full drain is held until the body has been read whole or the connection closes, so a
   * client that never finishes its body keeps it for the linger, not for a millisecond.
   */
  private drainBound(req: IncomingMessage, socket: Socket): number {
    if (req.complete || this.fullDrains >= FULL_DRAINS_AT_ONCE) return SHORT_DRAIN_BYTES;
    this.fullDrains++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.fullDrains--;
    };
    req.once('end', release);
    socket.once('close', release);
    return DRAIN_BYTES;
  }

  /**
   * Whether `socket` is a refused request's, closing: a request that follows on it (pipelined)
   * must not run, since its client was told the connection closes and will never see its answer.
   */
  closing(socket: Socket | null): boolean {
    return socket !== null && this.sockets.has(socket);
  }

  /** At the server's close: connections still lingering are closed now. */
  closeAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}
