import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { TemplateResolver } from './cloudformation-template.ts';
import { FunctionError, SYNC_PAYLOAD_LIMIT_BYTES } from './lambda-host.ts';

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
/** API Gateway's default integration timeout (29 s). */
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

export type Invoke = (functionArn: string, event: unknown, requestId: string) => Promise<unknown>;

interface Route {
  path: string;
  segments: string[];
  method: string;
  functionArn: string;
  timeoutMs: number;
}

interface GatewayResponse {
  statusCode?: string;
  headers: Record<string, string>;
  template?: string;
}

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

/** A token bucket: the stage's steady rate and burst. */
class Throttle {
  private tokens: number;
  private last = Date.now();
  private readonly rate: number;
  private readonly burst: number;
  constructor(rate: number, burst: number) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
  }
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class ApiGatewayEmulator {
  private readonly routes: Route[] = [];
  private readonly responses = new Map<string, GatewayResponse>();
  private readonly binaryTypes: string[];
  private readonly throttle: Throttle | undefined;
  private readonly stageName: string;
  private readonly apiId: string;
  private readonly invoke: Invoke;
  private server: Server | undefined;
  private readonly log: (line: string) => void;

  constructor(resolver: TemplateResolver, invoke: Invoke, log: (line: string) => void = () => {}) {
    this.invoke = invoke;
    this.log = log;
    const [api, ...others] = resolver.resourcesOfType('AWS::ApiGateway::RestApi');
    if (!api || others.length > 0) throw new Error('The emulator serves exactly one REST API');
    const stack = api.stack;
    const r = (v: unknown, where: string) => resolver.resolve(stack, v, where);
    this.apiId = resolver.physicalName(stack, api.logicalId);
    this.binaryTypes = ((api.resource.Properties?.BinaryMediaTypes as string[] | undefined) ?? []).map((t) =>
      t.toLowerCase(),
    );

    // Paths of the resource tree: each resource's part under its parent's path.
    const resources = resolver.resourcesOfType('AWS::ApiGateway::Resource');
    const pathOf = new Map<string, string>();
    const resolvePath = (logicalId: string): string => {
      const known = pathOf.get(logicalId);
      if (known !== undefined) return known;
      const res = resources.find((x) => x.logicalId === logicalId);
      if (!res) throw new Error(`API resource ${logicalId} is not in the template`);
      const parent = res.resource.Properties?.ParentId as Record<string, unknown>;
      const parentPath = 'Ref' in parent ? resolvePath(String(parent.Ref)) : '';
      const path = `${parentPath}/${String(res.resource.Properties?.PathPart)}`;
      pathOf.set(logicalId, path);
      return path;
    };
    for (const m of resolver.resourcesOfType('AWS::ApiGateway::Method')) {
      const p = m.resource.Properties ?? {};
      const target = p.ResourceId as Record<string, unknown>;
      const path = 'Ref' in target ? resolvePath(String(target.Ref)) : '/';
      const integration = p.Integration as { Type: string; Uri: unknown; TimeoutInMillis?: number };
      if (integration?.Type !== 'AWS_PROXY') {
        throw new Error(`${m.logicalId}: only Lambda proxy integrations are emulated`);
      }
      const uri = String(r(integration.Uri, `${m.logicalId}.Integration.Uri`));
      const functionArn = /\/functions\/(.+)\/invocations$/.exec(uri)?.[1];
      if (!functionArn) throw new Error(`${m.logicalId}: not a Lambda integration URI: ${uri}`);
      this.routes.push({
        path,
        segments: path.split('/').filter(Boolean),
        method: String(p.HttpMethod),
        functionArn,
        timeoutMs: integration.TimeoutInMillis ?? DEFAULT_INTEGRATION_TIMEOUT_MS,
      });
    }
    // API Gateway picks the most specific match: literal segments before {parameters}.
    this.routes.sort((a, b) => specificity(b) - specificity(a));

    for (const g of resolver.resourcesOfType('AWS::ApiGateway::GatewayResponse')) {
      const p = r(g.resource.Properties ?? {}, g.logicalId) as {
        ResponseType: string;
        StatusCode?: string;
        ResponseParameters?: Record<string, string>;
        ResponseTemplates?: Record<string, string>;
      };
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(p.ResponseParameters ?? {})) {
        const name = /^gatewayresponse\.header\.(.+)$/.exec(k)?.[1];
        // Static values are quoted in the template: 'value'.
        if (name) headers[name] = v.replace(/^'(.*)'$/s, '$1');
      }
      this.responses.set(p.ResponseType, {
        ...(p.StatusCode ? { statusCode: p.StatusCode } : {}),
        headers,
        ...(p.ResponseTemplates?.['application/json']
          ? { template: p.ResponseTemplates['application/json'] }
          : {}),
      });
    }

    const [stage] = resolver.resourcesOfType('AWS::ApiGateway::Stage');
    this.stageName = String(stage?.resource.Properties?.StageName ?? 'prod');
    const settings = (
      stage?.resource.Properties?.MethodSettings as Record<string, unknown>[] | undefined
    )?.find((s) => s.ResourcePath === '/*' && s.HttpMethod === '*');
    this.throttle =
      settings?.ThrottlingRateLimit !== undefined
        ? new Throttle(Number(settings.ThrottlingRateLimit), Number(settings.ThrottlingBurstLimit ?? 1))
        : undefined;
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

  private match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    const parts = path.split('/').filter(Boolean);
    for (const route of this.routes) {
      if (route.method !== method || route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      route.segments.forEach((seg, i) => {
        const part = parts[i] as string;
        const name = /^\{(\w+)\}$/.exec(seg)?.[1];
        if (name) params[name] = safeDecode(part);
        else if (seg !== part) ok = false;
      });
      if (ok) return { route, params };
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const started = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const target = req.url ?? '/';
    const [rawPath = '/', rawQuery = ''] = target.split(/\?(.*)/s);
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
        : this.match(method, rawPath);
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
    const event = this.event(req, method, rawPath, rawQuery, match, body, requestId, started);
    const payload = JSON.stringify(event);
    // What Lambda refuses for a synchronous invoke; API Gateway passes the refusal on as 413.
    if (Buffer.byteLength(payload) > SYNC_PAYLOAD_LIMIT_BYTES) {
      return this.gatewayResponse(res, 'REQUEST_TOO_LARGE', requestId, 'Request Too Long');
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

  private event(
    req: IncomingMessage,
    method: string,
    rawPath: string,
    rawQuery: string,
    match: { route: Route; params: Record<string, string> },
    body: Buffer,
    requestId: string,
    started: number,
  ): APIGatewayProxyEvent {
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    // API Gateway passes header names as the client sent them; the last value wins in `headers`.
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      const value = req.rawHeaders[i + 1] as string;
      headers[name] = value;
      multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
    }
    const query: Record<string, string> = {};
    const multiQuery: Record<string, string[]> = {};
    for (const [k, v] of new URLSearchParams(rawQuery)) {
      query[k] = v;
      multiQuery[k] = [...(multiQuery[k] ?? []), v];
    }
    const hasQuery = Object.keys(query).length > 0;
    const contentType =
      String(req.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase() ?? '';
    const binary = body.length > 0 && this.isBinary(contentType);
    return {
      resource: match.route.path,
      path: rawPath,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: hasQuery ? query : null,
      multiValueQueryStringParameters: hasQuery ? multiQuery : null,
      pathParameters: Object.keys(match.params).length > 0 ? match.params : null,
      stageVariables: null,
      body: body.length === 0 ? null : body.toString(binary ? 'base64' : 'utf8'),
      isBase64Encoded: binary,
      requestContext: {
        accountId: '000000000000',
        apiId: this.apiId,
        domainName: String(req.headers.host ?? ''),
        httpMethod: method,
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        requestId,
        requestTimeEpoch: started,
        resourceId: match.route.path,
        resourcePath: match.route.path,
        stage: this.stageName,
        identity: { sourceIp: req.socket.remoteAddress ?? '', userAgent: req.headers['user-agent'] ?? null },
      } as unknown as APIGatewayProxyEvent['requestContext'],
    };
  }

  private isBinary(contentType: string): boolean {
    return this.binaryTypes.some(
      (t) => t === '*/*' || t === contentType || (t.endsWith('/*') && contentType.startsWith(t.slice(0, -1))),
    );
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

function specificity(route: Route): number {
  // Literal segments weigh more than parameters at each position, earlier positions most.
  return route.segments.reduce((sum, seg, i) => sum + (seg.startsWith('{') ? 0 : 2 ** (20 - i)), 0);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The whole body, or why not: over `limit` (API Gateway stops there), or the client went away. */
function readAll(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | 'too-large' | 'aborted') => {
      if (done) return;
      done = true;
      resolve(v);
    };
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        req.resume();
        return finish('too-large');
      }
      chunks.push(c);
    });
    req.on('end', () => finish(Buffer.concat(chunks)));
    req.on('error', () => finish('aborted'));
    req.on('aborted', () => finish('aborted'));
    req.on('close', () => {
      if (!req.complete) finish('aborted');
    });
  });
}
