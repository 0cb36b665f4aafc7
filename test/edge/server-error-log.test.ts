/**
 * Each 5xx the platform answers leaves its operator one log line at the default level: a 504 after
 * a call's deadline, a 502 from a provider and a service gateway's 502 among them. Tried from the
 * operator's side: the platform as `agenthost start` runs it, its log read as it writes it; the
 * service gateway of the local host with the log the platform gives it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { LocalServiceHost } from '../../functions/adapters/local/local-service-host.ts';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { lambdaShell } from '../../functions/http/lambda-shell.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { logServerError } from '../../functions/shared/server-error-log.ts';
import { SupervisionRecorder } from '../contract/service-runner-contract.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type RunningPlatform, startPlatformProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

type Line = Record<string, unknown>;

/** The JSON log lines a process wrote (its other output is the start-up banner). */
function jsonLines(output: string): Line[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

describe('one operator log line for each 5xx the API answers', () => {
  let fake: FakeLlmProviders;
  let dataDir: string;
  let platform: RunningPlatform;
  const key = generateApiKey();
  const INPUT_MARK = 'input-that-must-not-be-logged';

  before(async () => {
    fake = await startFakeLlm();
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-5xx-log-'));
    // The default level, as an operator who sets nothing has it.
    const level = parseConfig({}).logLevel;
    assert.equal(level, 'info');
    platform = await startPlatformProcess({
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_LOG_LEVEL: level,
      PLATFORM_BOOTSTRAP_API_KEY: key,
      ANTHROPIC_API_KEY: 'sk-ant-test-5xx-log',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const published = await fetch(`${platform.url}/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'answers',
        description: 'Answers.',
        supported_providers: ['anthropic'],
        prompt_template: 'Answer {{q}}',
      }),
    });
    assert.equal(published.status, 201, await published.text());
  });
  after(async () => {
    await platform?.stop('SIGKILL');
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = async (headers: Record<string, string> = {}) => {
    const res = await fetch(`${platform.url}/local/answers/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ q: INPUT_MARK }),
    });
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, code: body.error?.code, requestId: res.headers.get('x-request-id') ?? '' };
  };

  /** The lines naming this request, once the process has written the answer's line. */
  const linesOf = (requestId: string) =>
    waitFor(`the log line of ${requestId}`, () => {
      const lines = jsonLines(platform.output()).filter((l) => JSON.stringify(l).includes(requestId));
      return lines.length > 0 ? lines : undefined;
    });

  it('a 504 after the call’s deadline: one warn line with the request id, method, route, status and code', async () => {
    fake.setResponder(() => ({ text: 'too late', delayMs: 20_000 }));
    const answered = await call({ 'x-platform-deadline-ms': String(Date.now() + 2_000) });
    fake.setResponder(undefined);
    assert.equal(answered.status, 504);
    assert.equal(answered.code, 'TIMEOUT');
    const lines = await linesOf(answered.requestId);
    // Another line about the request would arrive with it; give it a moment to show.
    await new Promise((r) => setTimeout(r, 300));
    const all = jsonLines(platform.output()).filter((l) => JSON.stringify(l).includes(answered.requestId));
    assert.equal(all.length, 1, JSON.stringify(all));
    assert.deepEqual(
      { ...lines[0], time: undefined },
      {
        time: undefined,
        level: 'warn',
        msg: 'server error answered',
        request_id: answered.requestId,
        method: 'POST',
        route: '/{org}/{agent}/{version}/{endpoint}',
        status: 504,
        code: 'TIMEOUT',
      },
    );
  });

  it('a 502 from the model’s provider: one line, no input, no key; a 4xx none', async () => {
    fake.enqueue({ status: 500 });
    const answered = await call();
    assert.equal(answered.status, 502);
    const lines = await linesOf(answered.requestId);
    await new Promise((r) => setTimeout(r, 300));
    const all = jsonLines(platform.output()).filter((l) => JSON.stringify(l).includes(answered.requestId));
    assert.equal(all.length, 1, JSON.stringify(all));
    assert.equal(lines[0]?.status, 502);
    assert.equal(lines[0]?.code, 'LLM_ERROR');
    assert.equal(lines[0]?.route, '/{org}/{agent}/{version}/{endpoint}');
    const output = platform.output();
    assert.ok(!output.includes(INPUT_MARK), 'no body in the log');
    assert.ok(!output.includes(key) && !output.includes('sk-ant-test-5xx-log'), 'no key in the log');

    // The client's mistake (a 4xx) is not the operator's: no line.
    const res = await fetch(`${platform.url}/local/answers/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    assert.equal(res.status, 400);
    const refused = res.headers.get('x-request-id') ?? '';
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      jsonLines(platform.output()).filter((l) => JSON.stringify(l).includes(refused)),
      [],
    );
  });
});

describe('one operator log line for each 5xx a service gateway answers itself', () => {
  let dir: string;
  let host: LocalServiceHost;
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const serviceId = randomUUID();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-5xx-service-'));
    host = new LocalServiceHost({
      sandbox: new BwrapSandbox({ runsDir: join(dir, 'runs') }),
      host: '127.0.0.1',
      hostLoopbackPorts: [],
      healthyMs: 60_000,
      startTimeoutMs: 30_000,
      log: (level, message, fields) => lines.push({ level, message, fields }),
    });
    host.bind(new SupervisionRecorder());
  });
  after(async () => {
    await host.stop(serviceId, { remove: true }).catch(() => undefined);
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a 502 when the app drops the connection: one warn line with the service, method, status and code; not the path', {
    timeout: 90_000,
  }, async () => {
    // An app that accepts each request and hangs up without an answer.
    const app = `import { createServer } from 'node:http';
createServer((req) => req.socket.destroy()).listen(Number(process.env.PORT));
`;
    const started = await host.start({
      serviceId,
      name: 'dropper',
      workspaceId: randomUUID(),
      bundle: { data: await bundleOf({ 'server.mjs': app }), format: 'tar.gz' },
      command: null,
      env: { PLATFORM_SERVICE_ID: serviceId },
      secretNames: [],
      secrets: {},
      http: true,
      instances: { min: 1, max: 1 },
    });
    await waitFor(
      'the service to be ready',
      async () => ((await fetch(`${started.url}/health`)).status === 200 ? true : undefined),
      60_000,
    );
    const res = await fetch(`${started.url}/private/path-not-logged?token=x`);
    assert.equal(res.status, 502);
    const served = lines.filter((l) => l.message === 'server error answered');
    assert.equal(served.length, 1, JSON.stringify(lines));
    assert.equal(served[0]?.level, 'warn');
    assert.deepEqual(served[0]?.fields, {
      service_id: serviceId,
      method: 'GET',
      status: 502,
      code: 'BAD_GATEWAY',
    });
    assert.ok(!JSON.stringify(lines).includes('path-not-logged'));
  });
});

describe('the operator line on AWS', () => {
  it('names API Gateway’s own id beside the platform’s, so the access log’s line is found', async () => {
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    const record = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields });
    const logger = { debug: record, info: record, warn: record, error: record };
    // A function behind API Gateway: the buffered Lambda shell's app answers a 503.
    const handler = lambdaShell(async (_request, context) => {
      logServerError(logger, {
        requestId: context.requestId,
        gatewayRequestId: context.gatewayRequestId,
        method: 'GET',
        route: '/tasks',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
      });
      return new Response('{}', { status: 503 });
    });
    await handler({
      httpMethod: 'GET',
      resource: '/tasks',
      path: '/tasks',
      headers: {},
      requestContext: {
        requestId: 'c0ffee00-1111-2222-3333-444455556666',
        identity: { sourceIp: '127.0.0.9' },
      },
    } as never);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.fields?.gateway_request_id, 'c0ffee00-1111-2222-3333-444455556666');
    assert.match(String(lines[0]?.fields?.request_id), /^req_[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });
});
