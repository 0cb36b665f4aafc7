import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { countAddressRequest } from '../core/usage/address-rate-limit.ts';
import { PerAddressCount } from '../edge/per-address-count.ts';
import type { Deps } from '../platform/deps.ts';
import { PlatformError } from '../shared/errors.ts';

/** An over-cap connection is closed this long after it opened, answered or not. */
export const OVER_CAP_GRACE_MS = 1_000;

/**
 * Node's server options for the local server's timeouts (docs/http.md "Slow and many
 * connections"): the headers within `headersTimeoutMs`, the whole request, body included, within
 * `requestTimeoutMs` (a handler's own work is not counted: the clock stops when the request has
 * arrived). Node looks for late requests every `connectionsCheckingInterval` (30 s by default,
 * which would hold a slow client up to 30 s past its timeout), so it looks a few times per timeout.
 */
export function edgeServerOptions(config: Deps['config']): ServerOptions {
  const requestTimeout = config.requestTimeoutMs;
  // Node refuses a headers timeout longer than the request's: the request's bounds both.
  const headersTimeout = Math.min(config.headersTimeoutMs, requestTimeout);
  return {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeout / 4))),
  };
}

/** Node's own answers to a request that never arrived whole or could not be read (its defaults). */
const CLIENT_ERROR_ANSWERS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
};

/**
 * The local server's guard over connections: at most `maxConnectionsPerAddress` open at once per
 * client address (the connection's peer), and every request Node itself refuses (headers or body
 * too slow, headers too large, unparsable) counted against its address's per-minute limit like any
 * refused request, so a client that only ever times out still meets the limit.
 *
 * A connection over the cap is not closed blind: its request, once its headers arrive, is answered
 * 429 (local-server.ts asks `overCap`), and the connection is closed OVER_CAP_GRACE_MS after it
 * opened whatever it sent.
 */
export class ConnectionGuard {
  private readonly deps: Deps;
  private readonly open: PerAddressCount;
  private readonly overCapSockets = new WeakSet<Socket>();

  constructor(server: Server, deps: Deps) {
    this.deps = deps;
    this.open = new PerAddressCount(deps.config.maxConnectionsPerAddress);
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) =>
      this.clientError(err, socket as Socket),
    );
  }

  /** Whether `socket` came in over its address's cap: its request is answered 429 and not run. */
  overCap(socket: Socket | null): boolean {
    return socket !== null && this.overCapSockets.has(socket);
  }

  /** The 429 of a request on an over-cap connection. */
  refusal(): PlatformError {
    const limit = this.deps.config.maxConnectionsPerAddress;
    return new PlatformError(
      'RATE_LIMITED',
      `More than ${limit} connections open at once from this address; close some, or retry in a second`,
      { suggested_wait_time: 1, limit, quota: 'connections' },
    );
  }

  private admit(socket: Socket): void {
    const release = this.open.take(socket.remoteAddress ?? '');
    if (release) {
      socket.once('close', release);
      return;
    }
    this.overCapSockets.add(socket);
    const timer = setTimeout(() => socket.destroy(), OVER_CAP_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }

  private clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    // A client gone away (a reset, a broken pipe) was refused nothing: there is no one to answer.
    // Nor was a connection that never sent a byte (a browser's preconnect, a pool's spare): it is
    // closed at the headers' timeout without an answer, and is not a request to count.
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || socket.bytesRead === 0) {
      socket.destroy();
      return;
    }
    countAddressRequest(this.deps, socket.remoteAddress ?? '').catch((e: unknown) =>
      this.deps.logger.warn('address count failed', { error: String(e) }),
    );
    // As Node does without a listener: an answer only if none has begun on this connection.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!inFlight?.headersSent) {
      const status = CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? '400 Bad Request';
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
    socket.destroy();
  }
}
