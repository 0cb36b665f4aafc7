import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type GatewayResponse,
  matchRoute,
  type Route,
  restApiFromTemplate,
  type Throttle,
} from './api-gateway-definition.ts';
import { proxyEvent, readAll } from './api-gateway-proxy-event.ts';
import { answerStreamed } from './api-gateway-streaming.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import { FunctionError, type ResponseStreamSink, SYNC_PAYLOAD_LIMIT_BYTES } from './lambda-host.ts';

/**
 * The REST API as API Gateway serves it, built from the synthesized template alone: the resource
 * tree (AWS::ApiGateway::Resource path parts), the methods and the Lambda proxy integration each
 * names (with its timeout), the binary media types, the stage's throttling, and the gateway
 * responses (AWS::ApiGateway::GatewayResponse templates) for what API Gateway answers itself: no
 * route, a body over 10 MB, throttling, an integration timeout, a failed function. Requests become
 * the REST proxy event Lambda receives; the function's proxy result becomes the response.
 *
 * The API is served at the root (as under a custom domain with an empty base path), not under the
 * stage name, so a client uses the same URLs as on `npm start`.
 */

/** API Gateway's request payload limit (10 MB). */
export const API_PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

export type Invoke = (
  functionArn: string,
  event: unknown,
  requestId: string,
  stream?: ResponseStreamSink,
) => Promise<unknown>;

/** Default statuses of the response types the emulator produces (API Gateway's table). */
const DEFAULT_STATUS: Record<string, number> = {
  MISSING_AUTHENTICATION_TOKEN: 403,
  REQUEST_TOO_LARGE: 413,
  THROTTLED: 429,
  INTEGRATION_TIMEOUT: 504,
  INTEGRATION_FAILURE: 504,
  DEFAULT_4XX: 400,
  DEFAULT_5XX: 500,
};

export class ApiGatewayEmulator {
  private readonly routes: Route[];
  private readonly responses: Map<string, GatewayResponse>;
  private readonly binaryTypes: string[];
  private readonly throttle: Throttle | undefined;
  private readonly stageName: string;
  private readonly apiId: string;
  private readonly invoke: Invoke;
  private server: Server | undefined;
  private readonly log: (line: string) => void;

  /** Each request the API answered (its own refusals too): REST APIs bill them all alike. */
  private readonly onRequest: (streamed: boolean) => void;

  constructor(
    resolver: TemplateResolver,
    invoke: Invoke,
    log: (line: string) => void = () => {},
    onRequest: (streamed: boolean) => void = () => {},
  ) {
    this.invoke = invoke;
    this.log = log;
    this.onRequest = onRequest;
    const api = restApiFromTemplate(resolver);
    this.apiId = api.apiId;
    this.binaryTypes = api.binaryTypes;
    this.routes = api.routes;
    this.responses = api.responses;
    this.stageName = api.stageName;
    this.throttle = api.throttle;
  }

  async listen(port: number, host: string): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.log(`api gateway failure: ${String(err)}`);
        if (!res.headersSent)
          this.gatewayResponse(res, 'DEFAULT_5XX', `req-${randomUUID()}`, 'Internal server error', 500);
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 5_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: one request through API Gateway's stages in their order (throttle, resource match, authorizer, integration)
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const started = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const target = req.url ?? '/';
    const [rawPath = '/', rawQuery = ''] = target.split(/\?(.*)/s);
    let streamed = false;
    res.once('finish', () => this.onRequest(streamed));
    if (this.throttle && !this.throttle.take()) {
      req.resume();
      return this.gatewayResponse(res, 'THROTTLED', requestId, 'Too Many Requests');
    }
    // An empty segment (`//`) matches no resource, as on API Gateway.
    const match =
      rawPath
        .split('/')
        .slice(1)
        .some((s) => s === '') && rawPath !== '/'
        ? undefined
        : matchRoute(this.routes, method, rawPath);
    if (!match) {
      req.resume();
      return this.gatewayResponse(
        res,
        'MISSING_AUTHENTICATION_TOKEN',
        requestId,
        'Missing Authentication Token',
      );
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > API_PAYLOAD_LIMIT_BYTES) {
      res.setHeader('Connection', 'close');
      req.resume();
      return this.gatewayResponse(res, 'REQUEST_TOO_LARGE', requestId, 'Request Too Long');
    }
    const body = await readAll(req, API_PAYLOAD_LIMIT_BYTES);
    if (body === 'aborted') return void res.destroy();
    if (body === 'too-large') {
      res.setHeader('Connection', 'close');
      return this.gatewayResponse(res, 'REQUEST_TOO_LARGE', requestId, 'Request Too Long');
    }
    const event = proxyEvent(req, method, rawPath, rawQuery, match, body, requestId, started, {
      apiId: this.apiId,
      stageName: this.stageName,
      binaryTypes: this.binaryTypes,
    });
    const payload = JSON.stringify(event);
    // What Lambda refuses for a synchronous invoke; API Gateway passes the refusal on as 413.
    if (Buffer.byteLength(payload) > SYNC_PAYLOAD_LIMIT_BYTES) {
      return this.gatewayResponse(res, 'REQUEST_TOO_LARGE', requestId, 'Request Too Long');
    }

    if (match.route.streaming) {
      streamed = true;
      return answerStreamed(res, match.route, JSON.parse(payload), requestId, this.invoke, (type, why) => {
        this.log(
          `${method} ${match.route.path}: ${type === 'INTEGRATION_TIMEOUT' ? 'timed out' : `function error ${why}`}`,
        );
        const [message, status] =
          type === 'INTEGRATION_TIMEOUT'
            ? ['Endpoint request timed out', undefined]
            : ['Internal server error', 502];
        this.gatewayResponse(res, type, requestId, message, status);
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), match.route.timeoutMs);
    });
    let result: unknown;
    try {
      result = await Promise.race([
        this.invoke(match.route.functionArn, JSON.parse(payload), requestId),
        timeout,
      ]);
    } catch (err) {
      this.log(
        `${method} ${match.route.path}: function error ${err instanceof FunctionError ? `${err.errorType}: ${err.message}` : String(err)}`,
      );
      return this.gatewayResponse(res, 'DEFAULT_5XX', requestId, 'Internal server error', 502);
    } finally {
      clearTimeout(timer);
    }
    if (result === 'timeout') {
      return this.gatewayResponse(res, 'INTEGRATION_TIMEOUT', requestId, 'Endpoint request timed out');
    }
    const proxy = result as {
      statusCode?: number;
      headers?: Record<string, unknown>;
      multiValueHeaders?: Record<string, unknown[]>;
      body?: string;
      isBase64Encoded?: boolean;
    } | null;
    if (
      !proxy ||
      typeof proxy !== 'object' ||
      !Number.isInteger(proxy.statusCode) ||
      (proxy.body !== undefined && proxy.body !== null && typeof proxy.body !== 'string') ||
      Buffer.byteLength(JSON.stringify(proxy)) > SYNC_PAYLOAD_LIMIT_BYTES + 100
    ) {
      this.log(`${method} ${match.route.path}: malformed Lambda proxy response`);
      return this.gatewayResponse(res, 'DEFAULT_5XX', requestId, 'Internal server error', 502);
    }
    res.statusCode = proxy.statusCode as number;
    for (const [k, v] of Object.entries(proxy.multiValueHeaders ?? {})) res.setHeader(k, v.map(String));
    for (const [k, v] of Object.entries(proxy.headers ?? {})) res.setHeader(k, String(v));
    res.setHeader('x-amzn-RequestId', requestId);
    const out = proxy.isBase64Encoded
      ? Buffer.from(proxy.body ?? '', 'base64')
      : Buffer.from(proxy.body ?? '', 'utf8');
    res.setHeader('Content-Length', out.length);
    res.end(out);
  }

  /**
   * What API Gateway answers itself: the template's gateway response for `type` (else the default
   * 4XX or 5XX one), with `$context` values filled in.
   */
  private gatewayResponse(
    res: ServerResponse,
    type: string,
    requestId: string,
    message: string,
    status?: number,
  ): void {
    const code = status ?? DEFAULT_STATUS[type] ?? 500;
    const fallback = code >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
    const response = this.responses.get(type) ?? this.responses.get(fallback);
    const statusCode = Number(response?.statusCode ?? code);
    const body = response?.template
      ? response.template
          .replaceAll('$context.error.messageString', JSON.stringify(message))
          .replaceAll('$context.error.message', message)
          .replaceAll('$context.requestId', requestId)
      : JSON.stringify({ message });
    res.statusCode = statusCode;
    for (const [k, v] of Object.entries(response?.headers ?? { 'Content-Type': 'application/json' }))
      res.setHeader(k, v);
    res.setHeader('x-amzn-RequestId', requestId);
    res.setHeader(
      'x-amzn-ErrorType',
      type === 'MISSING_AUTHENTICATION_TOKEN' ? 'MissingAuthenticationTokenException' : type,
    );
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  }
}
