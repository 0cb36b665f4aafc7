import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A refused request's body is read and dropped up to this much after its answer. */
export const DRAIN_BYTES = 1024 * 1024;
/** A refused request's connection stays open this long after its answer, at most. */
export const LINGER_MS = 5_000;

/**
 * The close of a connection whose request was refused before its body was read (no valid key, a
 * declared size over the limit, a body that crossed it), done so the client gets its answer.
 *
 * Node closes a `Connection: close` socket as soon as the answer is written, and closing a socket
 * with unread bytes sends a reset. A client still uploading then fails its next write, and often
 * never reads the answer already in its buffer: the bench's clients saw `EPIPE` instead of 401 in
 * most runs, and a client that sends its whole body before reading (most HTTP libraries) sees
 * "connection reset" every time. So, as web servers do (nginx's lingering close), after the answer
 * the server's side is ended (FIN) and the body is read and dropped up to DRAIN_BYTES: a client
 * that sends a body of ordinary size finishes it, and the connection then closes cleanly. Past
 * that, reading stops (the client's writes wait on a full window, costing nothing), and the socket
 * is closed LINGER_MS after the answer, by which time the client has read it. Nothing of the body
 * is kept, and no refused caller can make the server read more than DRAIN_BYTES.
 */
export class LingeringClose {
  private readonly sockets = new Set<Socket>();

  /**
   * Call before the refusal's answer is written, with `Connection: close` set on it. Node ends such
   * a connection through the socket's `destroySoon` once the answer is out; this socket's own
   * replaces it.
   */
  closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
    const socket = res.socket;
    if (!socket || socket.destroyed) return;
    let read = 0;
    req.on('error', () => undefined);
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_BYTES) req.pause();
    });
    req.resume();
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    const closeWhenWritten = socket.destroySoon.bind(socket);
    let ending = false;
    socket.destroySoon = () => {
      if (ending) return;
      ending = true;
      // A body read whole leaves nothing unread, so the close is clean at once; a request Node has
      // destroyed (its body crossed the limit mid-request) has nothing left to drain.
      if (req.complete || req.destroyed) return closeWhenWritten();
      socket.end();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      req.once('end', closeWhenWritten);
    };
  }

  /** At the server's close: connections still lingering are closed now. */
  closeAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}
