import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { webhookInput } from '../../functions/core/schedules/schedule-triggers.ts';
import { operations as callOperations } from '../../functions/http/calls.ts';
import { createModuleHandler } from '../../functions/http/module-handler.ts';
import { PlatformError, parseJsonBody } from '../../functions/shared/errors.ts';
import { MAX_JSON_DEPTH } from '../../functions/shared/json-depth.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type ApiResponse, errorOf, type TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

/** JSON nested `levels` deep: arrays around a value, or objects for `kind` 'object'. */
const nested = (levels: number, kind: 'array' | 'object' = 'array') =>
  kind === 'array'
    ? `${'['.repeat(levels)}1${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** A raw HTTP request whose target is sent exactly as given (fetch would normalise it). */
function rawRequest(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path: target, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hostile input: no request stops the process', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; ws: string };
  let hookPath: string;

  /** A normal request after each hostile one: the same server must still answer it. */
  const stillServing = async () => {
    fake.enqueue({ text: 'fine' });
    const res = await p.request('POST', '/hostco/echo/v1/run', { key: owner.key, body: { ok: true } });
    assert.equal(res.status, 200, res.text);
  };

  before(async () => {
    fake = await startFakeLlm();
    p = await startRunsPlatform(fake);
    const o = await createAccount(p.deps, { org: 'hostco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'echo', description: 'Echoes its input.', supported_providers: ['anthropic'] },
    });
    assert.equal(published.status, 201, published.text);
    const hook = await p.request<{ webhook_url: string }>('POST', `/workspaces/${owner.ws}/schedules`, {
      key: owner.key,
      body: { agent: 'hostco/echo', type: 'webhook', input_data: {} },
    });
    assert.equal(hook.status, 201, hook.text);
    hookPath = new URL(hook.body.webhook_url, 'http://x').pathname;
  });
  after(async () => {
    await p.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('a multipart call whose body ends mid-file is 400 INVALID_INPUT, and the server keeps serving', async () => {
    const boundary = 'hostileboundary';
    const truncated = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\nthe file never ends`,
    );
    const res = await p.request('POST', '/hostco/echo/v1/run', {
      key: owner.key,
      rawBody: truncated,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(errorOf(res).code, 'INVALID_INPUT');
    await stillServing();
  });

  it('a client that aborts mid-body gets nothing, and the server keeps serving', async () => {
    const u = new URL(p.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/hostco/echo/v1/run',
        headers: {
          authorization: `Bearer ${owner.key}`,
          'content-type': 'multipart/form-data; boundary=b',
          'content-length': String(1024 * 1024),
        },
      });
      req.on('error', () => resolve());
      req.write('--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\npartial', () =>
        // Give the server the first bytes, then vanish.
        setImmediate(() => {
          req.destroy();
          resolve();
        }),
      );
    });
    await stillServing();
  });

  for (const target of ['//', '///', '//?a=1', '//evil.com/tasks', '//evil.com/hostco/echo/v1/run']) {
    it(`GET ${target} is 404 NOT_FOUND, and the server keeps serving`, async () => {
      const res = await rawRequest(p.url, 'GET', target, { authorization: `Bearer ${owner.key}` });
      assert.equal(res.status, 404, res.body);
      assert.equal((JSON.parse(res.body) as { error: { code: string } }).error.code, 'NOT_FOUND');
      await stillServing();
    });
  }

  it('in AWS (an API Gateway event to the calls handler) the same bodies get the same answers', async () => {
    const handler = createModuleHandler('calls', callOperations, async () => p.deps);
    const event = (body: string, contentType: string, base64 = false) =>
      ({
        resource: '/{org}/{agent}/{version}/{endpoint}',
        path: '/hostco/echo/v1/run',
        httpMethod: 'POST',
        headers: { authorization: `Bearer ${owner.key}`, 'content-type': contentType },
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: { org: 'hostco', agent: 'echo', version: 'v1', endpoint: 'run' },
        stageVariables: null,
        body: base64 ? Buffer.from(body).toString('base64') : body,
        isBase64Encoded: base64,
        requestContext: { requestId: 'req_lambda', identity: { sourceIp: '127.0.0.1' } },
      }) as never;
    const invoke = async (e: never) =>
      (await handler(e, { awsRequestId: 'req_lambda' } as never)) as { statusCode: number; body: string };
    const truncated = await invoke(
      event(
        '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\ncut',
        'multipart/form-data; boundary=b',
        true,
      ),
    );
    assert.equal(truncated.statusCode, 400, truncated.body);
    const deep = await invoke(event(`{"x":${nested(5000)}}`, 'application/json'));
    assert.equal(deep.statusCode, 400, deep.body);
    assert.match(deep.body, /nested deeper than 64 levels/);
    fake.enqueue({ text: 'fine' });
    const fine = await invoke(event('{"ok":true}', 'application/json'));
    assert.equal(fine.statusCode, 200, fine.body);
  });

  describe(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is 400 INVALID_INPUT everywhere`, () => {
    const deep = nested(5000);
    const expectDeepRefused = (res: ApiResponse) => {
      assert.equal(res.status, 400, res.text);
      const e = errorOf(res);
      assert.equal(e.code, 'INVALID_INPUT');
      assert.match(e.message, /nested deeper than 64 levels/);
    };

    it('the JSON body parser (publishing an agent)', async () => {
      const res = await p.request('POST', '/agents', {
        key: owner.key,
        rawBody: `{"name":"deep","description":"d","supported_providers":["anthropic"],"x":${deep}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectDeepRefused(res);
      await stillServing();
    });

    it('call input (JSON) and multipart metadata', async () => {
      const json = await p.request('POST', '/hostco/echo/v1/run', {
        key: owner.key,
        rawBody: `{"input":${nested(5000, 'object')}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectDeepRefused(json);
      const form = new FormData();
      form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
      form.append('metadata', `{"x":${deep}}`);
      const multipart = await fetch(`${p.url}/hostco/echo/v1/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.key}` },
        body: form,
      });
      const text = await multipart.text();
      assert.equal(multipart.status, 400, text);
      assert.match(text, /nested deeper than 64 levels/);
      await stillServing();
    });

    it('schedule input_data (creating a schedule)', async () => {
      const created = await p.request('POST', `/workspaces/${owner.ws}/schedules`, {
        key: owner.key,
        rawBody: `{"agent":"hostco/echo","type":"webhook","input_data":{"x":${deep}}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectDeepRefused(created);
      await stillServing();
    });

    it('webhook bodies', async () => {
      const res = await p.request('POST', hookPath, {
        key: null,
        rawBody: deep,
        headers: { 'content-type': 'application/json' },
      });
      expectDeepRefused(res);
      await stillServing();
    });

    it('the limit is exact, and brackets inside strings do not count', () => {
      assert.deepEqual(parseJsonBody(nested(MAX_JSON_DEPTH)), JSON.parse(nested(MAX_JSON_DEPTH)));
      assert.throws(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1)), PlatformError);
      const bracketsInString = JSON.stringify({ s: `${'['.repeat(500)}\\"{{{` });
      assert.deepEqual(parseJsonBody(bracketsInString), JSON.parse(bracketsInString));
      assert.throws(() => webhookInput({}, Buffer.from(deep)), /nested deeper than 64 levels/);
    });
  });
});
