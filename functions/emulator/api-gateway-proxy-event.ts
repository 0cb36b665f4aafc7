/**
 * A request as the API Gateway emulator (api-gateway-emulator.ts) hands it to a function: its body
 * read up to API Gateway's limit, and the REST proxy event Lambda receives (headers and query in
 * their single- and multi-value forms, a binary body base64-encoded, the request context).
 */
import type { IncomingMessage } from 'node:http';
import type { APIGatewayEventIdentity, APIGatewayProxyEvent } from 'aws-lambda';
import { clientKeyed } from '../shared/client-keyed.ts';
import type { Route } from './api-gateway-definition.ts';

export function proxyEvent(
  req: IncomingMessage,
  method: string,
  rawPath: string,
  rawQuery: string,
  match: { route: Route; params: Record<string, string> },
  body: Buffer,
  requestId: string,
  started: number,
  api: { apiId: string; stageName: string; binaryTypes: string[] },
): APIGatewayProxyEvent {
  const headers = clientKeyed<string>();
  const multiValueHeaders = clientKeyed<string[]>();
  // API Gateway passes header names as the client sent them; the last value wins in `headers`.
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query = clientKeyed<string>();
  const multiQuery = clientKeyed<string[]>();
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
  const binary = body.length > 0 && isBinary(api.binaryTypes, contentType);
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
      // Absent on a route without an authorizer, as here; the type has it as undefined.
      authorizer: undefined,
      apiId: api.apiId,
      domainName: String(req.headers.host ?? ''),
      httpMethod: method,
      path: rawPath,
      protocol: `HTTP/${req.httpVersion}`,
      requestId,
      requestTimeEpoch: started,
      resourceId: match.route.path,
      resourcePath: match.route.path,
      stage: api.stageName,
      identity: callerIdentity(req.socket.remoteAddress ?? '', req.headers['user-agent'] ?? null),
    },
  };
}

/** The caller as a keyless, unauthorized REST request's event names it: its address and agent, the rest null. */
function callerIdentity(sourceIp: string, userAgent: string | null): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

/** Whether a body of this content type is passed base64-encoded (the binary media types). */
function isBinary(binaryTypes: string[], contentType: string): boolean {
  return binaryTypes.some(
    (t) => t === '*/*' || t === contentType || (t.endsWith('/*') && contentType.startsWith(t.slice(0, -1))),
  );
}

/** The whole body, or why not: over `limit` (API Gateway stops there), or the client went away. */
export function readAll(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
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
