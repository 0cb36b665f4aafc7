import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { type AuthContext, authenticate } from '../core/api-keys/api-keys.ts';
import {
  type AddressAdmission,
  addressLimited,
  countAddressRequest,
} from '../core/usage/address-rate-limit.ts';
import { createAllHandlers } from '../http/index.ts';
import { bodyTooLarge, PlatformError } from '../shared/errors.ts';
import { logServerError } from '../shared/server-error-log.ts';
import { AnswerFirst, type RequestAnswer } from './answer-first.ts';
import { bodySizing } from './carried-body-meter.ts';
import { ConnectionGuard, edgeServerOptions } from './connection-guard.ts';
import type { DashboardAssets } from './dashboard-assets.ts';
import type { Deps } from './deps.ts';
import { challengeHeaders, errorEnvelope } from './error-answer.ts';
import { attachBody } from './event-body.ts';
import { responseHeaders, unauthenticatedRefusal } from './http-handler.ts';
import {
  CREDENTIAL_BEFORE_BODY,
  IGNORED_KEYLESS_BODY_BYTES,
  KEYLESS_BODY_READS_PER_ADDRESS,
  keylessReadsRefusal,
} from './keyless-bodies.ts';
import { LingeringClose } from './lingering-close.ts';
import { serveSharedDownload } from './local-downloads.ts';
import { requestUrl, safeDecode, toEvent, writeResult } from './local-proxy-event.ts';
import { PerAddressCount } from './per-address-count.ts';
import { drainBody, readBody, spoolBody } from './request-body.ts';
import { type OperationId, type RouteDef, routeList } from './routes.ts';

interface CompiledRoute {
  id: OperationId;
  route: RouteDef;
  pattern: RegExp;
  names: string[];
  /** The path's first segment when it is literal (`tasks` of /tasks/{id}); undefined for a parameter. */
  first: string | undefined;
}

function compile(id: OperationId, route: RouteDef): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((seg) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (!m?.[1]) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]);
      return '([^/]+)';
    })
    .join('/');
  const firstSegment = route.path.split('/')[1] ?? '';
  return {
    id,
    route,
    pattern: new RegExp(`^${source}$`),
    names,
    first: /^\{\w+\}$/.test(firstSegment) ? undefined : firstSegment,
  };
}

/** A path's first segment as sent (`tasks` of /tasks/t1), which a literal first segment matches exactly. */
function firstSegment(pathname: string): string {
  const end = pathname.indexOf('/', 1);
  return pathname.slice(1, end < 0 ? undefined : end);
}

/**
 * The local platform: one Node process serving the same module handlers API Gateway invokes in
 * AWS, with each request shaped as an API Gateway REST proxy event.
 */
export class LocalServer {
  readonly server: Server;
  private readonly deps: Deps;
  private readonly handlers: ReturnType<typeof createAllHandlers>;
  private readonly compiled: CompiledRoute[];
  /**
   * The routes a path can match, by its first segment, in the order of `compiled`: those with that
   * literal first segment or a parameter there. An agent call (/{org}/{agent}/…), matched last of
   * 69, then tries a handful of patterns instead of every one.
   */
  private readonly byFirstSegment = new Map<string, CompiledRoute[]>();
  /** The routes whose first segment is a parameter: all a path with any other first segment can match. */
  private readonly parameterFirst: CompiledRoute[];
  private readonly dashboard: DashboardAssets | undefined;
  private readonly answerFirst: AnswerFirst;
  /** Connections of refused requests, closed once their answer has been read. */
  private readonly lingering = new LingeringClose();
  /** Connections per address, and what Node refuses itself counted against the address. */
  private readonly connections: ConnectionGuard;
  /** Bodies being read per address on keyless routes with no credential checked first. */
  private readonly keylessReads = new PerAddressCount(KEYLESS_BODY_READS_PER_ADDRESS);

  /** `dashboard`: the built web app, served at `/` for paths no API route has. */
  constructor(deps: Deps, options: { dashboard?: DashboardAssets | undefined } = {}) {
    this.deps = deps;
    this.dashboard = options.dashboard;
    this.handlers = createAllHandlers(deps);
    this.answerFirst = new AnswerFirst(deps.store, deps.logger);
    // Literal segments before parameters, so /tasks/x never shadows a literal sibling route.
    this.compiled = routeList
      .map(([id, r]) => compile(id, r))
      .sort((a, b) => a.names.length - b.names.length || b.route.path.length - a.route.path.length);
    this.parameterFirst = this.compiled.filter((c) => c.first === undefined);
    for (const c of this.compiled)
      if (c.first !== undefined && !this.byFirstSegment.has(c.first))
        this.byFirstSegment.set(
          c.first,
          this.compiled.filter((d) => d.first === c.first || d.first === undefined),
        );
    this.server = createServer(edgeServerOptions(deps.config), (req, res) => {
      // A request behind a refused one on its connection is not run (RFC 9112 §9.6: the refusal
      // said the connection closes), nor is its body read: the connection closes as it would.
      if (this.lingering.closing(req.socket)) return;
      const answer = this.answerFirst.begin();
      const handle = async () => {
        try {
          await this.handle(req, res, answer);
        } finally {
          await answer.settle();
        }
      };
      // One look at the store's state per request (Store.asOneRequest), not one per read.
      const handling = deps.store.asOneRequest ? deps.store.asOneRequest(handle) : handle();
      handling.catch((err) => {
        if (res.headersSent) {
          deps.logger.error('local server failure', { error: String(err) });
          return void res.destroy();
        }
        const requestId = `req_${randomUUID()}`;
        const failure = new PlatformError('INTERNAL_ERROR', 'Internal error');
        logServerError(deps.logger, {
          requestId,
          method: (req.method ?? '').toUpperCase(),
          route: undefined,
          status: failure.status,
          code: failure.code,
          cause: err,
        });
        void this.sendError(res, failure, requestId);
      });
    });
    this.server.keepAliveTimeout = 5_000;
    this.connections = new ConnectionGuard(this.server, deps);
  }

  async listen(port: number, host: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address() as AddressInfo;
    const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const url = `http://${shownHost}:${addr.port}`;
    // Orchestrator runs call the platform here (PLATFORM_API_URL) unless PLATFORM_PUBLIC_URL says otherwise.
    this.deps.config.publicUrl ??= url;
    return url;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      this.lingering.closeAll();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse, answer: RequestAnswer): Promise<void> {
    const requestId = `req_${randomUUID()}`;
    // Read now: Node detaches a request whose reading is given up (a stream pipeline failed, a
    // for-await loop left early: a body over the limit) from its socket, setting req.socket to
    // null, and the refusal that follows still names the caller's address.
    const address = req.socket.remoteAddress ?? '';
    // Nothing of a body is read off the wire while the request is checked (the store is asked for
    // the address's count, a key, a webhook's secret): whatever reads the body resumes it. Else each
    // waiting connection holds the body's first 64 KiB read: 1,500 keyless ones, 100 MB.
    req.socket.pause();
    if (this.connections.overCap(req.socket)) {
      res.setHeader('Connection', 'close');
      this.lingering.closeAfterAnswer(req, res);
      const addressAdmission = await countAddressRequest(this.deps, address);
      const from = { req, address, auth: undefined, addressAdmission };
      return this.sendError(res, this.connections.refusal(), requestId, from);
    }
    const method = (req.method ?? 'GET').toUpperCase();
    const url = requestUrl(req.url);
    if (!url) {
      this.closeAfterAnswerIfBody(req, res);
      return this.sendError(res, new PlatformError('NOT_FOUND', `No route for ${method}`), requestId, {
        req,
        address,
        auth: undefined,
      });
    }
    // A large output's download link (BundleStore.shareUrl), served as S3 serves AWS's.
    if (await serveSharedDownload(this.deps.bundles, req, res, url)) return;
    let pathTemplate: string | undefined;
    let match: { id: OperationId; route: RouteDef; params: Record<string, string> } | undefined;
    const candidates = this.byFirstSegment.get(firstSegment(url.pathname)) ?? this.parameterFirst;
    for (const c of candidates) {
      const m = c.pattern.exec(url.pathname);
      if (!m) continue;
      pathTemplate ??= c.route.path;
      if (c.route.method !== method) continue;
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1] ?? '');
      });
      match = { id: c.id, route: c.route, params };
      break;
    }
    // The dashboard's files only where the API has no route at all, so it never shadows one (a
    // path some route has, asked with another method, stays the API's 405).
    if (!match) this.closeAfterAnswerIfBody(req, res);
    if (!pathTemplate && this.dashboard?.serve(req, res, method, url.pathname)) return;
    if (!match) {
      // What API Gateway sends to the edge function through its ANY methods (docs/http.md): 405
      // with Allow, the CORS preflight, or 404, with the rate-limit headers of every answer.
      const event = toEvent(
        req,
        address,
        url,
        method,
        pathTemplate ?? url.pathname,
        {},
        undefined,
        requestId,
      );
      return writeResult(res, await this.handlers.edge(event, { awsRequestId: requestId }));
    }

    const { route } = match;
    const keyless = route.auth === 'none';
    const takesBody = route.body !== undefined || route.binaryBody !== undefined;
    // A route that takes no body reads none: what a client sends anyway is dropped, up to a small
    // bound when nothing vouches for the request.
    const limit = takesBody
      ? (route.binaryBody?.maxBytes ?? this.deps.config.maxBodyBytes)
      : keyless
        ? IGNORED_KEYLESS_BODY_BYTES
        : this.deps.config.maxBodyBytes;
    // Every body is counted as AWS's event would carry it: the same bodies fit on both deployments.
    const sizing = bodySizing(req.headers, limit);
    const declaredTooLarge = sizing.declaredRefusal;
    const refuse = async (err: PlatformError, auth?: AuthContext, addressAdmission?: AddressAdmission) => {
      // The connection closes after the answer without a reset the client could meet before
      // reading it (lingering-close.ts).
      res.setHeader('Connection', 'close');
      this.lingering.closeAfterAnswer(req, res);
      await this.sendError(res, err, requestId, { req, address, auth, addressAdmission });
    };
    // Refused before a byte of the body is read: a bad key (or, keyless, an address past its limit
    // or a wrong credential in the path), then a declared size over the limit. The caller and the
    // address's count, handed to the handler so its middleware does not do either a second time.
    let authenticated: AuthContext | undefined;
    let addressAdmission: AddressAdmission | undefined;
    let releaseKeylessRead: (() => void) | undefined;
    if (keyless) {
      // Refused without waiting on anything, so no connection waits holding a body it cannot send.
      if (declaredTooLarge) return refuse(declaredTooLarge);
      addressAdmission = await countAddressRequest(this.deps, address);
      if (addressAdmission.refused)
        return refuse(addressLimited(addressAdmission, this.deps.clock.now()), undefined, addressAdmission);
      const check = CREDENTIAL_BEFORE_BODY[match.id];
      const wrong = await check?.(this.deps, match.params).then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof PlatformError) return err;
          throw err;
        },
      );
      if (wrong) return refuse(wrong, undefined, addressAdmission);
      if (takesBody && !check) {
        releaseKeylessRead = this.keylessReads.take(address);
        if (!releaseKeylessRead) return refuse(keylessReadsRefusal(), undefined, addressAdmission);
        res.once('close', releaseKeylessRead);
      }
    } else {
      const outcome = await authenticate(this.deps, req.headers.authorization, {
        acceptRunCredential: match.route.acceptsRunCredential === true,
      }).catch((err: unknown) => {
        if (err instanceof PlatformError) return err;
        throw err;
      });
      if (outcome instanceof PlatformError) {
        const refusal = await unauthenticatedRefusal(this.deps, address, outcome);
        return refuse(refusal.error, undefined, refusal.admission);
      }
      authenticated = outcome;
    }
    const context = { awsRequestId: requestId, authenticated, addressAdmission, answerFirst: answer.offer };
    if (declaredTooLarge) return refuse(declaredTooLarge, authenticated, addressAdmission);
    const meter = sizing.meter();
    const tooLarge = (failure: 'too-large' | 'too-large-event') =>
      refuse(sizing.refusal(failure), authenticated, addressAdmission);

    const handler = this.handlers[match.route.module];
    if (!takesBody) {
      const drained = await drainBody(req, limit);
      if (drained === 'aborted') return void res.destroy();
      if (drained === 'too-large') return refuse(bodyTooLarge(limit), authenticated, addressAdmission);
      const event = toEvent(req, address, url, method, route.path, match.params, undefined, requestId);
      return writeResult(res, await handler(event, context));
    }
    if (match.route.binaryBody?.stream) {
      const spooled = await spoolBody(req, limit, authenticated !== undefined, meter);
      releaseKeylessRead?.();
      if (spooled === 'aborted') return void res.destroy();
      if (spooled === 'too-large' || spooled === 'too-large-event') return tooLarge(spooled);
      let result: APIGatewayProxyResult;
      try {
        const event = toEvent(
          req,
          address,
          url,
          method,
          match.route.path,
          match.params,
          undefined,
          requestId,
        );
        attachBody(event, spooled);
        result = await handler(event, context);
      } finally {
        // Removed before the answer goes out, also when the handler fails.
        if ('path' in spooled) await rm(spooled.path, { force: true });
      }
      return writeResult(res, result);
    }
    const body = await readBody(req, limit, !keyless, meter);
    releaseKeylessRead?.();
    if (body === 'aborted') return void res.destroy();
    if (body === 'too-large' || body === 'too-large-event') return tooLarge(body);
    const event = toEvent(req, address, url, method, match.route.path, match.params, body, requestId);
    writeResult(res, await handler(event, context));
  }

  /**
   * A request no handler reads the body of (no route, the dashboard's files): if it has one, its
   * connection closes after the answer, the body drained within lingering-close.ts's bound.
   */
  private closeAfterAnswerIfBody(req: IncomingMessage, res: ServerResponse): void {
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return void req.resume();
    res.setHeader('Connection', 'close');
    this.lingering.closeAfterAnswer(req, res);
  }

  /**
   * An answer the server gives before any handler runs. With the request at hand it carries what a
   * handler's answer carries: the rate-limit headers (the caller's, or the address's) and CORS.
   */
  private async sendError(
    res: ServerResponse,
    err: PlatformError,
    requestId: string,
    from?: {
      req: IncomingMessage;
      address: string;
      auth: AuthContext | undefined;
      /** The address's count when this request was counted already (a refused key). */
      addressAdmission?: AddressAdmission | undefined;
    },
  ): Promise<void> {
    const headers = await responseHeaders(
      from ? this.deps : undefined,
      from
        ? {
            requestId,
            address: from.address,
            origin: from.req.headers.origin,
            ...(from.auth ? { auth: from.auth } : {}),
            ...(from.addressAdmission ? { addressAdmission: from.addressAdmission } : {}),
          }
        : { requestId, address: '' },
    );
    const wait = err.details?.suggested_wait_time;
    if (err.code === 'RATE_LIMITED' && typeof wait === 'number') headers['Retry-After'] = String(wait);
    writeResult(res, {
      statusCode: err.status,
      headers: { ...headers, ...challengeHeaders(err) },
      body: JSON.stringify(errorEnvelope(err, requestId)),
    });
  }
}
