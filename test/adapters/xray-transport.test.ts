import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../../functions/adapters/aws/node-sha256.ts';
import { retryAfterMillis, xrayTransport } from '../../functions/adapters/telemetry/xray-transport.ts';

/**
 * The X-Ray span export's transport (functions/adapters/telemetry/xray-transport.ts) against a
 * loopback server standing in for X-Ray's OTLP endpoint: what arrives is the batch as given, signed
 * with SigV4 for service `xray` (checked by re-signing and by computing the signature by hand, as
 * AWS documents it), and each answer becomes the export response the exporter expects.
 */

const REGION = 'eu-west-1';
const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-example',
};
// A protobuf batch stand-in with every byte value, NULs and high bytes included.
const BATCH = new Uint8Array(Array.from({ length: 300 }, (_, i) => (i * 7) % 256));

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The loopback endpoint: records each request and answers with `answer` (200 and a body by default). */
let received: Received[] = [];
let answer: (res: ServerResponse) => void = (res) => res.writeHead(200).end(Buffer.from([1, 2, 3]));
let server: Server;
let url: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const transport = () => xrayTransport(url, REGION, { credentials: CREDENTIALS });
const header = (r: Received, name: string) => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
};

describe('xrayTransport', () => {
  it('POSTs the batch unchanged as OTLP protobuf, signed with SigV4 for xray in the region', async () => {
    received = [];
    answer = (res) =>
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from([1, 2, 3]));
    const t = transport();
    const response = await t.send(BATCH, 5000);
    t.shutdown();
    assert.deepEqual(response, { status: 'success', data: new Uint8Array([1, 2, 3]) });

    assert.equal(received.length, 1);
    const r = received[0] as Received;
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/v1/traces');
    assert.deepEqual(new Uint8Array(r.body), BATCH);
    assert.equal(header(r, 'content-type'), 'application/x-protobuf');
    assert.equal(header(r, 'x-amz-security-token'), CREDENTIALS.sessionToken);
    const amzDate = header(r, 'x-amz-date');
    assert.match(amzDate, /^\d{8}T\d{6}Z$/);
    const signedAt = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    assert.ok(Math.abs(Date.now() - signedAt.getTime()) < 60_000, amzDate);

    const authorization = header(r, 'authorization');
    const parsed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    assert.ok(parsed, authorization);
    const [, keyId, day, region, service, signedHeaders, signature] = parsed as unknown as string[];
    assert.equal(keyId, CREDENTIALS.accessKeyId);
    assert.equal(day, amzDate.slice(0, 8));
    assert.equal(region, REGION);
    assert.equal(service, 'xray');
    const names = (signedHeaders as string).split(';');
    for (const name of ['content-type', 'host', 'x-amz-date', 'x-amz-security-token']) {
      assert.ok(names.includes(name), `${name} is signed: ${signedHeaders}`);
    }
    assert.ok(!authorization.includes(CREDENTIALS.secretAccessKey));

    // Re-signed with the SDK's signer from what arrived (the signed headers as received, the body
    // as received): the same Authorization, so nothing signed was changed on the way.
    const { port } = server.address() as AddressInfo;
    const resigned = await new SignatureV4({
      service: 'xray',
      region: REGION,
      credentials: CREDENTIALS,
      sha256: NodeSha256,
    }).sign(
      new HttpRequest({
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port,
        path: '/v1/traces',
        headers: Object.fromEntries(names.map((n) => [n, header(r, n)])),
        body: new Uint8Array(r.body),
      }),
      { signingDate: signedAt },
    );
    assert.equal(resigned.headers.authorization, authorization);

    // And by hand, as AWS's Signature Version 4 documentation describes it, with node:crypto only.
    const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
    const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
    const canonicalRequest = [
      'POST',
      '/v1/traces',
      '',
      ...names.map((n) => `${n}:${header(r, n).trim()}`),
      '',
      signedHeaders,
      sha256(r.body),
    ].join('\n');
    const scope = `${day}/${REGION}/xray/aws4_request`;
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
    let key = hmac(`AWS4${CREDENTIALS.secretAccessKey}`, day as string);
    for (const part of [REGION, 'xray', 'aws4_request']) key = hmac(key, part);
    assert.equal(createHmac('sha256', key).update(stringToSign).digest('hex'), signature);
  });

  it('answers retryable to 429, 502, 503 and 504, with Retry-After in milliseconds when given', async () => {
    for (const [status, retryAfter, expected] of [
      [503, '7', 7000],
      [429, undefined, undefined],
      [502, undefined, undefined],
      [504, '0', 0],
    ] as const) {
      answer = (res) =>
        res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end('busy');
      const response = await transport().send(BATCH, 5000);
      assert.equal(response.status, 'retryable', String(status));
      assert.equal(
        response.status === 'retryable' ? response.retryInMillis : 'n/a',
        expected,
        String(status),
      );
    }
  });

  it('answers failure to any other status, naming the status and AWS’s error type, never the credentials or the body', async () => {
    for (const status of [400, 403, 413, 500]) {
      answer = (res) =>
        res
          .writeHead(status, { 'x-amzn-ErrorType': 'AccessDeniedException:http://internal.amazon.com/' })
          .end(`denied for ${CREDENTIALS.accessKeyId}`);
      const response = await transport().send(BATCH, 5000);
      assert.equal(response.status, 'failure', String(status));
      const message = response.status === 'failure' ? response.error.message : '';
      assert.match(message, new RegExp(`answered ${status}\\b`));
      assert.match(message, /\(AccessDeniedException\)$/);
      for (const secret of [
        CREDENTIALS.accessKeyId,
        CREDENTIALS.secretAccessKey,
        CREDENTIALS.sessionToken,
        'denied for',
      ]) {
        assert.ok(!message.includes(secret), `${status}: ${message}`);
      }
    }
  });

  it('answers retryable, without throwing, when nothing listens or no answer comes in time', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await xrayTransport(`http://127.0.0.1:${port}/v1/traces`, REGION, {
      credentials: CREDENTIALS,
    }).send(BATCH, 5000);
    assert.equal(refused.status, 'retryable');

    answer = () => {}; // never answers
    const started = Date.now();
    const silent = await transport().send(BATCH, 200);
    assert.equal(silent.status, 'retryable');
    assert.ok(Date.now() - started < 3000);
  });

  it('answers failure, without throwing, when no credentials can be loaded', async () => {
    received = [];
    const response = await xrayTransport(url, REGION, {
      credentials: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    }).send(BATCH, 5000);
    assert.equal(response.status, 'failure');
    assert.equal(received.length, 0);
  });

  it('refuses to be built without a region, saying so', () => {
    for (const region of [undefined, '']) {
      assert.throws(
        () =>
          xrayTransport('https://xray.eu-west-1.amazonaws.com/v1/traces', region, {
            credentials: CREDENTIALS,
          }),
        /needs the AWS region \(AWS_REGION/,
      );
    }
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(retryAfterMillis(null), undefined);
    assert.equal(retryAfterMillis('12'), 12_000);
    assert.equal(retryAfterMillis('soon'), undefined);
    assert.equal(retryAfterMillis(new Date(Date.now() - 5000).toUTCString()), 0);
    const inAMinute = retryAfterMillis(new Date(Date.now() + 60_000).toUTCString()) ?? 0;
    assert.ok(inAMinute > 55_000 && inAMinute <= 60_000, String(inAMinute));
  });
});
