import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { FetchHandler } from '../edge/edge-context.ts';
import { errorEnvelope } from '../edge/error-answer.ts';
import { lazyResponse, responseParts } from '../edge/lazy-response.ts';
import type { Deps } from '../platform/deps.ts';
import { PlatformError } from '../shared/errors.ts';
import { newRequestId } from '../shared/request-ids.ts';
import { ConnectionGuard, edgeServerOptions } from './connection-guard.ts';
import { LingeringClose } from './lingering-close.ts';
import { answerBytes, hasBody, toFetchRequest, writeResponse } from './node-request.ts';
import { UnreadAnswers } from './unread-answers.ts';

/*
 * The Node shell: Node's HTTP server serving one FetchHandler. What it does is about connections
 * only: at most so many per address (connection-guard.ts), a request's body left on the socket
 * until the handler reads it, and a connection whose request body was not read whole closed after
 * its answer without a reset (lingering-close.ts), and answers a client does not read bounded and
 * timed out (unread-answers.ts). It holds no routing, no authentication and no per-route rule.
 */

export interface NodeShellOptions {
  /** Wraps the handling of each request (the embedded store's one look per request). */
  around?: <T>(handle: () => Promise<T>) => Promise<T>;
  /**
   * Which work handed to waitUntil an answer need not wait for. Without it an answer waits for all
   * of it, as a buffered Lambda's does, so whoever saw the answer sees the work's writes. The
   * embedded store offers its rule (adapters/local/sqlite-answer-first.ts).
   */
  earlyAnswers?: EarlyAnswers;
}

/** A policy for answering before waitUntil work settles, asked once per request. */
export interface EarlyAnswers {
  begin(): EarlyAnswer;
}

/** One request's side of EarlyAnswers. */
export interface EarlyAnswer {
  /** Whether the answer may go out before `work` settles; if so, the policy settles it. */
  take(work: Promise<unknown>): boolean;
  /** Called once the answer is written: resolves when the work taken has settled. */
  settle(): Promise<void>;
}

export class NodeShell {
  readonly server: Server;
  private readonly app: FetchHandler;
  private readonly deps: Deps;
  /** Connections of requests whose body was left unread, closed once their answer has been read. */
  private readonly lingering: LingeringClose;
  /** Connections per address, and what Node refuses itself counted against the address. */
  private readonly connections: ConnectionGuard;
  /** Bytes of answers their clients have not read yet, per address and in all. */
  readonly unread: UnreadAnswers;

  constructor(app: FetchHandler, deps: Deps, options: NodeShellOptions = {}) {
    this.app = app;
    this.deps = deps;
    this.lingering = new LingeringClose(deps.config.lingerMs);
    this.unread = new UnreadAnswers({
      perAddressBytes: deps.config.maxUnreadBytesPerAddress,
      totalBytes: deps.config.maxUnreadBytes,
      writeTimeoutMs: deps.config.writeTimeoutMs,
    });
    this.server = createServer(edgeServerOptions(deps.config), (req, res) => {
      // A request behind a refused one on its connection is not run (RFC 9112 §9.6: the refusal
      // said the connection closes), nor is its body read: the connection closes as it would.
      if (this.lingering.closing(req.socket)) return;
      const early = options.earlyAnswers?.begin();
      const handle = async () => {
        try {
          await this.handle(req, res, early);
        } finally {
          await early?.settle();
        }
      };
      const handling = options.around ? options.around(handle) : handle();
      handling.catch((err: unknown) => this.failed(res, err));
    });
    this.server.keepAliveTimeout = 5_000;
    this.connections = new ConnectionGuard(this.server, deps);
  }

  /**
   * Serves on `port` of `host`, or on a socket bound beforehand (`npm start` binds its port before
   * anything else, local-platform/port-reservation.ts), whose listening handle the server takes
   * over (Node's `listen(handle)`): the port is never free in between.
   */
  async listen(port: number | NetServer, host?: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      const listening = () => {
        this.server.off('error', reject);
        resolve();
      };
      if (typeof port === 'number') this.server.listen(port, host, listening);
      else this.server.listen(port, listening);
    });
    const addr = this.server.address() as AddressInfo;
    const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${shownHost}:${addr.port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      this.lingering.closeAll();
    });
  }

  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
    early: EarlyAnswer | undefined,
  ): Promise<void> {
    // Read now: Node detaches a request whose reading is given up from its socket (req.socket
    // becomes null), and the answer still names the caller's address.
    const socket = req.socket;
    const address = socket.remoteAddress ?? '';
    // A client gone while its answer is written is nobody's failure (the write is dropped).
    res.on('error', ignore);
    // Nothing of a body is read off the wire while the request is checked (the store is asked for
    // the address's count, a key, a webhook's secret): whatever reads the body resumes it. Else each
    // waiting connection holds the body's first 64 KiB read: 1,500 keyless ones, 100 MB.
    socket.pause();
    const overCap = this.connections.overCap(socket);
    const method = (req.method ?? 'GET').toUpperCase();
    const url = requestUrl(req.url);
    const refusal = overCap
      ? this.connections.refusal()
      : // An address whose answers wait unread already: nothing more is run for it.
        this.unread.full(address)
        ? this.unread.refusal()
        : url
          ? undefined
          : new PlatformError('NOT_FOUND', `No route for ${method}`);
    const request = toFetchRequest(req, url ?? new URL('http://localhost/'), method);
    // Work the answer waits for: what waitUntil is handed and the early-answer policy does not take.
    const held: Promise<unknown>[] = [];
    const waitUntil = (work: Promise<unknown>) => {
      if (!early?.take(work)) held.push(work);
    };
    // Work run once the answer is delivered or its client gone (a streamed call's slot's release).
    const delivered: (() => Promise<unknown>)[] = [];
    const onDelivered = (run: () => Promise<unknown>) => void delivered.push(run);
    let writing = false;
    let written = false;
    try {
      const requestId = newRequestId();
      let response = await this.app(
        request,
        { requestId, address, ...(refusal ? { refusal } : {}) },
        { waitUntil, onDelivered },
      );
      if (held.length > 0) await this.settled(held.splice(0));
      // The client went away mid-body: nobody is left to answer. A streamed answer's producer is
      // told as a hang-up is (its call stops and its slot goes), or it would wait on a reader.
      if (res.destroyed || socket.destroyed) {
        void response.body?.cancel().catch(ignore);
        return void res.destroy();
      }
      // A large answer past what its address (or the server) may leave unread is not written, if
      // its request is a read the client can repeat. Any other request's work is done (a paid call
      // charged, a task created): its answer goes out whatever it costs, or the client would pay
      // for nothing and retry a write. The refusal before the run (`full`) still bounds what one
      // address leaves unread (docs/http.md, "Answers a client does not read").
      const bytes = answerBytes(response);
      if (bytes !== undefined && REPEATABLE.has(method) && !this.unread.fits(address, bytes))
        response = unreadRefusal(response, this.unread.refusal(), requestId);
      writing = true;
      await this.write(req, res, socket, address, response, overCap);
      written = true;
      // A streamed answer's producer hands its work over as it ends, after the answer began.
      if (held.length > 0) await this.settled(held.splice(0));
    } finally {
      if (delivered.length > 0) {
        const release = () => this.settled(delivered.map((run) => run()));
        // Nothing written: nothing to wait for. A write that threw ends in the shell's 500 or a
        // destroyed connection, after this returns: the release follows that end, unawaited.
        if (!writing) await release();
        else if (written) await delivery(res).then(release);
        else void delivery(res).then(release);
      }
    }
  }

  /** Writes the answer: the connection then reads its next request, or closes after it. */
  private async write(
    req: IncomingMessage,
    res: ServerResponse,
    socket: IncomingMessage['socket'],
    address: string,
    response: Response,
    overCap: boolean,
  ): Promise<void> {
    if (overCap || (hasBody(req) && !req.complete)) {
      // The connection closes after the answer without a reset the client could meet before
      // reading it (lingering-close.ts).
      res.setHeader('Connection', 'close');
      this.lingering.closeAfterAnswer(req, res);
    } else {
      // The request was read whole (or had no body): the connection reads its next request.
      req.resume();
      socket.resume();
    }
    await writeResponse(res, response, this.unread, address);
  }

  /** Waits for work an answer waits for; a failure of it is logged, never the answer's. */
  private async settled(work: Promise<unknown>[]): Promise<void> {
    for (const outcome of await Promise.allSettled(work)) {
      if (outcome.status === 'rejected') {
        this.deps.logger.error('work after an answer failed', { error: String(outcome.reason) });
      }
    }
  }

  /** A failure of the shell or the handler itself: a 500 if nothing was sent yet. */
  private failed(res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      this.deps.logger.error('local server failure', { error: String(err) });
      return void res.destroy();
    }
    const requestId = newRequestId();
    this.deps.logger.error('local server failure', { request_id: requestId, error: String(err) });
    const failure = new PlatformError(
      'INTERNAL_ERROR',
      `Internal error; quote request id ${requestId} when reporting it`,
    );
    const body = JSON.stringify(errorEnvelope(failure, requestId));
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId });
    res.end(body);
  }
}

/** Methods whose answer may be refused once built (RFC 9110 §9.2.1: safe, their work repeatable). */
const REPEATABLE = new Set(['GET', 'HEAD']);

/** A listener that drops what it is given. */
const ignore = () => undefined;

/** Settles once `res` has been written whole (the network took its last byte) or closed. */
function delivery(res: ServerResponse): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    res.once('finish', () => resolve()).once('close', () => resolve());
  });
}

/**
 * The 429 written instead of an answer too large to leave unread now (UnreadAnswers.fits): the
 * answer's own headers (request id, rate limits, CORS), the error's envelope and Retry-After.
 */
function unreadRefusal(response: Response, refusal: PlatformError, requestId: string): Response {
  const headers = responseParts(response)?.headers ?? {};
  return lazyResponse(JSON.stringify(errorEnvelope(refusal, requestId)), refusal.status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Retry-After': String(refusal.details?.suggested_wait_time ?? 1),
  });
}

/**
 * The request target as a URL whose pathname is exactly the path sent. `new URL('//evil.com/tasks',
 * base)` reads `//` as an authority (host evil.com, path /tasks) and throws on `//`, so the path is
 * appended to a fixed origin instead; anything but an origin-form target (`/...`) has no route.
 */
export function requestUrl(target: string | undefined): URL | undefined {
  if (!target?.startsWith('/')) return undefined;
  try {
    return new URL(`http://localhost${target}`);
  } catch {
    return undefined;
  }
}
