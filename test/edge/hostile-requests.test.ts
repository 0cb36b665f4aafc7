import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { MAX_JSON_DEPTH } from '../../functions/shared/json-depth.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type RunningPlatform, startPlatformProcess } from '../helpers/process.ts';

// biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are what the assertions check.
type Json = Record<string, any>;

/**
 * Requests written to stop the process, against the platform as it ships (`agenthost start` in its
 * own process): each is answered with a client error (or nothing, when the client is gone), and
 * the next ordinary request must succeed on the same process.
 */
describe('hostile requests never stop the platform', () => {
  let dataDir: string;
  let platform: RunningPlatform;
  const key = generateApiKey();
  let workspaceId = '';
  let webhookPath = '';
  let scheduleId = '';

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${platform.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: (text ? JSON.parse(text) : {}) as Json };
  };

  /** The ordinary request that must still work after each attack, on the same process. */
  const stillServing = async () => {
    assert.equal(platform.child.exitCode, null, `the platform exited:\n${platform.stdout()}`);
    const res = await api('GET', '/tasks');
    assert.equal(res.status, 200, res.text);
  };

  /** A raw request with the exact target given (fetch and URL would normalise it). */
  const rawGet = (target: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const { hostname, port } = new URL(platform.url);
      const req = httpRequest(
        { host: hostname, port, method: 'GET', path: target, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-hostile-'));
    platform = await startPlatformProcess({
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: key,
      PLATFORM_BOOTSTRAP_TIER: 'pro',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    const publish = async (body: Record<string, unknown>) => {
      const res = await api('POST', '/agents?allow_no_secrets=true', body);
      assert.equal(res.status, 201, res.text);
    };
    await publish({
      name: 'echo',
      description: 'A prompt agent.',
      supported_providers: ['anthropic'],
      prompt_template: 'Echo {{text}}',
    });
    const cat = await api('POST', '/agents?allow_no_secrets=true', {
      name: 'cat',
      type: 'tool',
      description: 'A tool agent.',
      supported_providers: ['any'],
      runtime: { command: 'cat' },
    });
    assert.equal(cat.status, 201, cat.text);
    // A tool agent runs only with its bundle uploaded (a README is enough for cat).
    const upload = await fetch(`${platform.url}/agents/${cat.json.id}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/gzip' },
      body: new Uint8Array(await bundleOf({ 'README.md': 'Echoes its input.\n' })),
    });
    assert.equal(upload.status, 200, await upload.text());
    const workspaces = await api('GET', '/workspaces');
    workspaceId = workspaces.json.workspaces[0].id;
    const webhook = await api('POST', `/workspaces/${workspaceId}/schedules`, {
      agent: 'local/echo',
      type: 'webhook',
    });
    assert.equal(webhook.status, 201, webhook.text);
    webhookPath = new URL(webhook.json.webhook_url).pathname;
    scheduleId = webhook.json.id;
  });
  after(async () => {
    if (platform.child.exitCode === null) await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a multipart call that ends in the middle of a file is 400, and the process serves on', async () => {
    const boundary = 'x-hostile-boundary';
    const complete = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\n${'hello '.repeat(2000)}\r\n--${boundary}--\r\n`,
    );
    for (const cut of [complete.length - 10, 200, 90]) {
      const res = await fetch(`${platform.url}/local/echo/v1/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
        body: complete.subarray(0, cut),
      });
      const text = await res.text();
      assert.equal(res.status, 400, text);
      assert.equal(JSON.parse(text).error.code, 'INVALID_INPUT');
      await stillServing();
    }
  });

  it('a client that disconnects in the middle of a body gets nothing, and the process serves on', async () => {
    const { hostname, port } = new URL(platform.url);
    for (const path of ['/local/echo/v1/run', '/tasks', webhookPath]) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
              'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Dispo',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', () => resolve());
      });
      await stillServing();
    }
  });

  it('request targets that are not a path: //, ///, //?a=1 and //evil.com/tasks are 404', async () => {
    for (const target of ['//', '///', '//?a=1', '//evil.com/tasks', '//evil.com/tasks?limit=1']) {
      const res = await rawGet(target);
      assert.equal(res.status, 404, `${target}: ${res.text}`);
      assert.equal(JSON.parse(res.text).error.code, 'NOT_FOUND', target);
      await stillServing();
    }
  });

  it(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is 400 INVALID_INPUT on every way in`, async () => {
    const tooDeep = deep(5000);
    const attempts: [string, () => Promise<{ status: number; text: string }>][] = [
      ['a JSON route (POST /tasks)', () => api('POST', '/tasks', `{"title":"t","x":${tooDeep}}`)],
      ['prompt-agent input', () => api('POST', '/local/echo/v1/run', `{"text":${tooDeep}}`)],
      ['tool-agent input', () => api('POST', '/local/cat/v1/run', `{"text":${tooDeep}}`)],
      [
        'schedule input_data (create)',
        () =>
          api(
            'POST',
            `/workspaces/${workspaceId}/schedules`,
            `{"agent":"local/echo","cron_expression":"0 9 * * *","input_data":{"a":${tooDeep}}}`,
          ),
      ],
      [
        'schedule input_data (update)',
        () =>
          api(
            'PATCH',
            `/workspaces/${workspaceId}/schedules/${scheduleId}`,
            `{"input_data":{"a":${tooDeep}}}`,
          ),
      ],
      [
        'a webhook body',
        async () => {
          const res = await fetch(`${platform.url}${webhookPath}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: `{"a":${tooDeep}}`,
          });
          return { status: res.status, text: await res.text() };
        },
      ],
      [
        'multipart metadata',
        async () => {
          const b = 'deep-boundary';
          const res = await fetch(`${platform.url}/local/echo/v1/run`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${b}` },
            body:
              `--${b}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"a":${tooDeep}}\r\n` +
              `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--${b}--\r\n`,
          });
          return { status: res.status, text: await res.text() };
        },
      ],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      assert.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
      const error = JSON.parse(res.text).error;
      assert.equal(error.code, 'INVALID_INPUT', what);
      assert.match(error.message, /nested deeper than 64 levels/, what);
      await stillServing();
    }
    // Exactly at the limit is still JSON the platform takes (brackets inside strings do not count):
    // the body object, input_data, then 62 arrays make 64 levels.
    const atLimit = `{"agent":"local/echo","cron_expression":"0 9 * * *","input_data":{"s":"${'[\\"'.repeat(100)}","a":${deep(MAX_JSON_DEPTH - 2)}}}`;
    const ok = await api('POST', `/workspaces/${workspaceId}/schedules`, atLimit);
    assert.equal(ok.status, 201, ok.text);
  });
});
