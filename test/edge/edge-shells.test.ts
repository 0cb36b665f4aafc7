import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { FetchHandler } from '../../functions/edge/edge-context.ts';
import { lambdaShell } from '../../functions/http/lambda-shell.ts';
import { lambdaStreamShell, PRELUDE_DELIMITER } from '../../functions/http/lambda-stream-shell.ts';
import { NodeShell } from '../../functions/local-platform/node-shell.ts';
import { requestIdTime } from '../../functions/shared/request-ids.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The three shells of the one edge contract (functions/edge/edge-context.ts), each over a
 * small FetchHandler of the test's own: what reaches the handler of what the transport carried, and
 * what the transport carries of the handler's Response.
 */

/** A handler that answers what it was given: method, path, query, headers, body and context. */
const echo: FetchHandler = async (request, context) => {
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()).toString('base64') : null;
  return Response.json({
    method: request.method,
    path: url.pathname,
    query: [...url.searchParams],
    header: request.headers.get('x-thing'),
    body,
    context,
  });
};

function event(overrides: Partial<APIGatewayProxyEvent>): APIGatewayProxyEvent {
  return {
    resource: '/tasks/{task_id}',
    path: '/base/tasks/a%2Fb%20c',
    httpMethod: 'GET',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { task_id: 'a/b c' },
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'abc', identity: { sourceIp: '127.0.0.7' } },
    ...overrides,
  } as unknown as APIGatewayProxyEvent;
}

describe('the buffered Lambda shell', () => {
  it('hands the app the request API Gateway carried: path from the resource, repeated values, the body', async () => {
    const result = await lambdaShell(echo)(
      event({
        multiValueHeaders: { 'X-Thing': ['one', 'two'] },
        multiValueQueryStringParameters: { a: ['1', '2'] },
        body: Buffer.from([0, 1, 2, 255]).toString('base64'),
        isBase64Encoded: true,
      }),
    );
    assert.equal(result.statusCode, 200);
    const seen = JSON.parse(result.body);
    assert.equal(seen.method, 'GET', 'a GET with a body stays a GET');
    assert.equal(seen.path, '/tasks/a%2Fb%20c', 'the template filled, without the base path');
    assert.deepEqual(seen.query, [
      ['a', '1'],
      ['a', '2'],
    ]);
    assert.equal(seen.header, 'one, two');
    assert.equal(Buffer.from(seen.body, 'base64').toString('hex'), '000102ff');
    // The platform's own id (time-ordered, as locally), API Gateway's kept beside it.
    const { requestId, ...context } = seen.context;
    assert.ok(requestIdTime(requestId) !== undefined, `${requestId} is minted by the platform`);
    assert.deepEqual(context, { gatewayRequestId: 'abc', address: '127.0.0.7', bodyBuffered: true });
  });

  it('fills a greedy resource (`{proxy+}`) segment by segment: its slashes stay, each segment is encoded', async () => {
    const result = await lambdaShell(echo)(
      event({
        resource: '/tasks/{proxy+}',
        path: '/base/tasks/task%201/complete',
        pathParameters: { proxy: 'task 1/complete' },
      }),
    );
    assert.equal(JSON.parse(result.body).path, '/tasks/task%201/complete');
  });

  it('keeps the first of a repeated single-valued header, as Node does for the local platform', async () => {
    const app: FetchHandler = async (request) =>
      Response.json({
        authorization: request.headers.get('authorization'),
        thing: request.headers.get('x-thing'),
      });
    const result = await lambdaShell(app)(
      event({
        multiValueHeaders: { Authorization: ['Bearer first', 'Bearer second'], 'X-Thing': ['one', 'two'] },
      }),
    );
    assert.deepEqual(JSON.parse(result.body), { authorization: 'Bearer first', thing: 'one, two' });
  });

  it('answers a binary media type base64-encoded and cookies as multi-value headers', async () => {
    const bytes = Buffer.from([0xde, 0xad, 0xbe, 0xef]);
    const app: FetchHandler = async () => {
      const headers = new Headers({ 'content-type': 'application/zip' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response(bytes, { status: 201, headers });
    };
    const result = await lambdaShell(app)(event({}));
    assert.equal(result.statusCode, 201);
    assert.equal(result.isBase64Encoded, true);
    assert.equal(Buffer.from(result.body, 'base64').toString('hex'), 'deadbeef');
    assert.deepEqual(result.multiValueHeaders, { 'set-cookie': ['a=1', 'b=2'] });
  });

  it('finishes the work an answer left before it returns (a Lambda is frozen after)', async () => {
    let done = false;
    const app: FetchHandler = async (_request, _context, afterAnswer) => {
      afterAnswer.waitUntil(
        new Promise<void>((resolve) =>
          setTimeout(() => {
            done = true;
            resolve();
          }, 20),
        ),
      );
      return new Response('ok');
    };
    const result = await lambdaShell(app)(event({}));
    assert.equal(result.body, 'ok');
    assert.equal(done, true);
  });
});

describe('the streamed Lambda shell', () => {
  it('writes the prelude, eight NUL bytes, then each chunk of the body as it comes', async () => {
    const encoder = new TextEncoder();
    let finished = false;
    const app: FetchHandler = async (_request, _context, afterAnswer) => {
      afterAnswer.waitUntil(
        Promise.resolve().then(() => {
          finished = true;
        }),
      );
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of ['event: delta\n', 'data: {"text":"hi"}\n\n', 'event: result\n']) {
            controller.enqueue(encoder.encode(part));
          }
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const out = new PassThrough();
    const parts: Buffer[] = [];
    out.on('data', (c: Buffer) => parts.push(c));
    await lambdaStreamShell(app)(event({}), out);
    const bytes = Buffer.concat(parts);
    const split = bytes.indexOf(Buffer.from(PRELUDE_DELIMITER));
    assert.ok(split > 0, 'the delimiter follows the prelude');
    assert.deepEqual(JSON.parse(bytes.subarray(0, split).toString()), {
      statusCode: 200,
      headers: { 'content-type': 'text/event-stream' },
    });
    assert.equal(
      bytes.subarray(split + PRELUDE_DELIMITER.length).toString(),
      'event: delta\ndata: {"text":"hi"}\n\nevent: result\n',
    );
    assert.equal(out.writableEnded, true);
    assert.equal(finished, true);
  });

  it('ends the answer only once the work it left is done, so a read after the answer finds its writes', async () => {
    let written = false;
    const app: FetchHandler = async (_request, _context, afterAnswer) => {
      // A call's record, committed a little after its answer's last byte was made.
      afterAnswer.waitUntil(
        new Promise<void>((resolve) =>
          setTimeout(() => {
            written = true;
            resolve();
          }, 20),
        ),
      );
      return new Response('{"data":1}', { headers: { 'content-type': 'application/json' } });
    };
    const out = new PassThrough();
    out.resume();
    let writtenAtEnd: boolean | undefined;
    out.on('finish', () => {
      writtenAtEnd = written;
    });
    await lambdaStreamShell(app)(event({}), out);
    assert.equal(writtenAtEnd, true, 'the record was written when the answer ended');
  });
});

describe('the Node shell', () => {
  let p: TestPlatform;
  let shell: NodeShell;
  let url: string;
  let seen: { method: string; address: string; read: boolean }[] = [];
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const app: FetchHandler = async (request, context) => {
      const path = new URL(request.url).pathname;
      const read = path === '/read';
      if (read) await request.arrayBuffer();
      seen.push({ method: request.method, address: context.address, read });
      if (path === '/stream') {
        let n = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (n === 3) return controller.close();
            controller.enqueue(new TextEncoder().encode(`part ${n++}\n`));
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/plain' } });
      }
      return new Response('answered', { status: path === '/refuse' ? 401 : 200 });
    };
    shell = new NodeShell(app, p.deps);
    url = await shell.listen(0, '127.0.0.1');
  });
  after(async () => {
    await shell.close();
    await p.close();
  });

  /** One raw request on a new connection: everything the server sent until it closed or `until` matched. */
  function raw(text: string, until?: RegExp): Promise<string> {
    const { port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let got = '';
      socket.on('data', (c) => {
        got += c.toString();
        if (until?.test(got)) socket.destroy();
      });
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
      socket.write(text);
    });
  }

  it('streams a body of several chunks as they come, chunked', async () => {
    seen = [];
    const res = await fetch(`${url}/stream`);
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    assert.equal(await res.text(), 'part 0\npart 1\npart 2\n');
    assert.deepEqual(seen, [{ method: 'GET', address: '127.0.0.1', read: false }]);
  });

  it('sends a one-chunk answer with its length, and keeps the connection for the next request', async () => {
    const got = await raw(
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n',
      /answered[\s\S]*answered/,
    );
    assert.equal(got.match(/content-length: 8/gi)?.length, 2, got);
    assert.doesNotMatch(got, /connection: close/i);
  });

  it('closes a connection whose body the app left unread, after an answer the client reads whole', async () => {
    const got = await raw('POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"partial":');
    assert.match(got, /^HTTP\/1.1 401 /);
    assert.match(got, /connection: close/i);
    assert.match(got, /answered$/);
  });

  it('reads a body the app asks for, and reports a method the Fetch API refuses to carry', async () => {
    seen = [];
    const read = await fetch(`${url}/read`, { method: 'POST', body: 'x'.repeat(200_000) });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('connection'), 'keep-alive');
    const trace = await raw('TRACE /t HTTP/1.1\r\nHost: x\r\n\r\n', /answered/);
    assert.match(trace, /^HTTP\/1.1 200 /);
    assert.deepEqual(
      seen.map((s) => [s.method, s.read]),
      [
        ['POST', true],
        ['TRACE', false],
      ],
    );
  });

  it('sends an answer after its waitUntil work, unless an early-answer policy takes the work', async () => {
    let released = false;
    let release: () => void = () => undefined;
    const app: FetchHandler = async (_request, _context, afterAnswer) => {
      const work = new Promise<void>((resolve) => {
        release = resolve;
      });
      afterAnswer.waitUntil(
        work.then(() => {
          released = true;
        }),
      );
      // Released a little after the answer is ready: an answer that waited for it arrives after.
      setTimeout(() => release(), 200);
      return new Response('answered');
    };
    const plain = new NodeShell(app, p.deps);
    try {
      await fetch(await plain.listen(0, '127.0.0.1'));
      assert.equal(released, true, 'no policy: the answer waits for the work, as a Lambda returns after it');
    } finally {
      await plain.close();
    }
    let settled: (taken: number) => void = () => undefined;
    const policySettled = new Promise<number>((resolve) => (settled = resolve));
    const early = {
      begin: () => {
        const taken: Promise<unknown>[] = [];
        return {
          take: (work: Promise<unknown>) => taken.push(work) > 0,
          settle: async () => {
            await Promise.all(taken);
            settled(taken.length);
          },
        };
      },
    };
    released = false;
    const answering = new NodeShell(app, p.deps, { earlyAnswers: early });
    try {
      await fetch(await answering.listen(0, '127.0.0.1'));
      assert.equal(released, false, 'a policy that takes the work: the answer goes first');
      assert.equal(await policySettled, 1, 'the policy settles the work it took once the answer is out');
      assert.equal(released, true);
    } finally {
      await answering.close();
    }
  });
});
