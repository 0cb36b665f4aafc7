/**
 * The Lambda Invoke API emulator, through the real LambdaClient over loopback HTTP: the platform's
 * LambdaNotifier enqueuing an alert delivery, synchronous results and function errors as Lambda
 * answers them, asynchronous retries and failure records, unknown functions and bad requests.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  InvalidRequestContentException,
  InvokeCommand,
  LambdaClient,
  RequestTooLargeException,
  ResourceNotFoundException,
} from '@aws-sdk/client-lambda';
import { LambdaNotifier } from '../../functions/adapters/aws/lambda-notifier.ts';
import {
  LambdaApiEmulator,
  type LambdaApiEmulatorOptions,
} from '../../functions/emulator/lambda-api-emulator.ts';
import type { AsyncInvokeConfig } from '../../functions/emulator/lambda-async-invocations.ts';
import { FunctionNotFoundError } from '../../functions/emulator/lambda-function-errors.ts';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

interface Call {
  functionName: string;
  payload: unknown;
}

interface Running {
  emulator: LambdaApiEmulator;
  client: LambdaClient;
  url: string;
  calls: Call[];
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.client.destroy();
    await r.emulator.close();
  }
});

type Handler = (payload: unknown, call: number) => unknown;

/** An emulator over a map of fake functions; each records its calls. */
async function start(
  functions: Record<string, Handler>,
  extra: Partial<LambdaApiEmulatorOptions> = {},
): Promise<Running> {
  const calls: Call[] = [];
  const counts = new Map<string, number>();
  const emulator = new LambdaApiEmulator({
    region: REGION,
    accountId: ACCOUNT,
    retryDelaysMs: [5, 10],
    invoke: async (functionName, payload) => {
      const fn = functions[functionName];
      if (!fn) throw new FunctionNotFoundError(functionName);
      calls.push({ functionName, payload });
      const n = (counts.get(functionName) ?? 0) + 1;
      counts.set(functionName, n);
      return fn(payload, n);
    },
    ...extra,
  });
  const url = await emulator.listen(0, '127.0.0.1');
  const client = new LambdaClient({
    region: REGION,
    endpoint: url,
    credentials: { accessKeyId: 'emulated', secretAccessKey: 'emulated' },
    maxAttempts: 1,
  });
  const r = { emulator, client, url, calls };
  running.push(r);
  return r;
}

const json = (bytes: Uint8Array | undefined) => JSON.parse(Buffer.from(bytes ?? []).toString('utf8'));

describe('Lambda API emulator: synchronous invocations', () => {
  it('answers the handler result as JSON, for a name, a partial ARN, a full ARN and $LATEST', async () => {
    const r = await start({ echo: (p) => ({ got: p }) });
    for (const FunctionName of [
      'echo',
      `${ACCOUNT}:function:echo`,
      `arn:aws:lambda:${REGION}:${ACCOUNT}:function:echo`,
      'echo:$LATEST',
    ]) {
      const out = await r.client.send(
        new InvokeCommand({ FunctionName, Payload: Buffer.from(JSON.stringify({ n: 1 })) }),
      );
      assert.equal(out.StatusCode, 200);
      assert.equal(out.FunctionError, undefined);
      assert.equal(out.ExecutedVersion, '$LATEST');
      assert.deepEqual(json(out.Payload), { got: { n: 1 } });
    }
    assert.deepEqual(
      r.calls.map((c) => c.functionName),
      ['echo', 'echo', 'echo', 'echo'],
    );
  });

  it('a handler returning nothing answers null; no payload reaches the handler as {}', async () => {
    const r = await start({ quiet: () => undefined });
    const out = await r.client.send(new InvokeCommand({ FunctionName: 'quiet' }));
    assert.equal(Buffer.from(out.Payload ?? []).toString(), 'null');
    assert.deepEqual(r.calls[0]?.payload, {});
  });

  it('a function error answers 200 with X-Amz-Function-Error: Unhandled and {errorType, errorMessage}', async () => {
    const r = await start({
      broken: () => {
        throw new TypeError('no such thing');
      },
    });
    const out = await r.client.send(
      new InvokeCommand({ FunctionName: 'broken', Payload: Buffer.from('{}') }),
    );
    assert.equal(out.StatusCode, 200);
    assert.equal(out.FunctionError, 'Unhandled');
    const body = json(out.Payload);
    assert.equal(body.errorType, 'TypeError');
    assert.equal(body.errorMessage, 'no such thing');
  });

  it('an unknown function is ResourceNotFoundException (404) naming its ARN; so is a published version', async () => {
    const r = await start({ known: () => 1 });
    for (const [FunctionName, arn] of [
      ['missing', `arn:aws:lambda:${REGION}:${ACCOUNT}:function:missing`],
      ['known:7', `arn:aws:lambda:${REGION}:${ACCOUNT}:function:known:7`],
    ] as const) {
      await assert.rejects(r.client.send(new InvokeCommand({ FunctionName })), (e: unknown) => {
        assert.ok(e instanceof ResourceNotFoundException);
        assert.equal(e.$metadata.httpStatusCode, 404);
        assert.equal(e.message, `Function not found: ${arn}`);
        assert.equal(e.Type, 'User');
        return true;
      });
    }
  });

  it('refuses a payload that is not JSON, and one over 6 MB, and keeps serving', async () => {
    const r = await start({ f: () => 'ok' });
    await assert.rejects(
      r.client.send(new InvokeCommand({ FunctionName: 'f', Payload: Buffer.from('{not json') })),
      InvalidRequestContentException,
    );
    await assert.rejects(
      r.client.send(
        new InvokeCommand({
          FunctionName: 'f',
          Payload: Buffer.from(JSON.stringify('x'.repeat(6 * 1024 * 1024 + 1))),
        }),
      ),
      RequestTooLargeException,
    );
    const out = await r.client.send(new InvokeCommand({ FunctionName: 'f' }));
    assert.deepEqual(json(out.Payload), 'ok');
  });

  it('answers bad names, unknown invocation types and unknown routes with AWS error shapes', async () => {
    const r = await start({ f: () => 'ok' });
    const bad = await fetch(`${r.url}/2015-03-31/functions/${encodeURIComponent('bad name!')}/invocations`, {
      method: 'POST',
      body: '{}',
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('x-amzn-errortype'), 'ValidationException');
    assert.equal(((await bad.json()) as { Type: string }).Type, 'User');
    const type = await fetch(`${r.url}/2015-03-31/functions/f/invocations`, {
      method: 'POST',
      headers: { 'x-amz-invocation-type': 'Sometimes' },
      body: '{}',
    });
    assert.equal(type.status, 400);
    const route = await fetch(`${r.url}/2015-03-31/functions/f`, { method: 'GET' });
    assert.equal(route.status, 404);
    assert.equal(route.headers.get('x-amzn-errortype'), 'UnknownOperationException');
  });

  it('DryRun answers 204 without running the function', async () => {
    const r = await start({ f: () => 'ok' }, { hasFunction: (name) => name === 'f' });
    const out = await r.client.send(new InvokeCommand({ FunctionName: 'f', InvocationType: 'DryRun' }));
    assert.equal(out.StatusCode, 204);
    assert.equal(r.calls.length, 0);
    await assert.rejects(
      r.client.send(new InvokeCommand({ FunctionName: 'g', InvocationType: 'DryRun' })),
      ResourceNotFoundException,
    );
  });
});

describe('Lambda API emulator: asynchronous invocations', () => {
  it("the platform's LambdaNotifier enqueues a delivery: 202 at once, then the function runs with it", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const r = await start({ 'agenthost-alert-delivery': () => gate });
    const notifier = new LambdaNotifier({
      client: r.client,
      functionName: 'agenthost-alert-delivery',
      policy: { mode: 'aws' },
    });
    const delivery = {
      url: 'https://hooks.example.com/x',
      payload: { event: 'schedule.failed' },
      label: 'a1',
    };
    // Answered although the function cannot finish until the gate opens.
    await notifier.enqueue(delivery);
    release();
    await r.emulator.drain();
    assert.deepEqual(r.calls, [{ functionName: 'agenthost-alert-delivery', payload: delivery }]);
    assert.deepEqual(r.emulator.failures(), []);
  });

  it('Event answers StatusCode 202 with an empty payload', async () => {
    const r = await start({ f: () => 'ignored' });
    const out = await r.client.send(
      new InvokeCommand({ FunctionName: 'f', InvocationType: 'Event', Payload: Buffer.from('{"a":1}') }),
    );
    assert.equal(out.StatusCode, 202);
    assert.equal(Buffer.from(out.Payload ?? []).length, 0);
    await r.emulator.drain();
    assert.deepEqual(r.calls, [{ functionName: 'f', payload: { a: 1 } }]);
  });

  it('a failing event is retried twice by default, then recorded as RetriesExhausted', async () => {
    const r = await start({
      flaky: () => {
        throw new Error('down');
      },
    });
    await r.emulator.invokeAsync('flaky', { id: 1 });
    await r.emulator.drain();
    assert.equal(r.calls.length, 3);
    const [record, ...rest] = r.emulator.failures();
    assert.deepEqual(rest, []);
    assert.ok(record);
    assert.equal(record.requestContext.condition, 'RetriesExhausted');
    assert.equal(record.requestContext.approximateInvokeCount, 3);
    assert.equal(
      record.requestContext.functionArn,
      `arn:aws:lambda:${REGION}:${ACCOUNT}:function:flaky:$LATEST`,
    );
    assert.deepEqual(record.requestPayload, { id: 1 });
    assert.equal(record.responseContext.functionError, 'Unhandled');
    assert.equal(record.responsePayload.errorMessage, 'down');
  });

  it('a retry that succeeds leaves no failure record', async () => {
    const r = await start({
      second: (_p, n) => {
        if (n === 1) throw new Error('first attempt fails');
        return 'fine';
      },
    });
    await r.emulator.invokeAsync('second', {});
    await r.emulator.drain();
    assert.equal(r.calls.length, 2);
    assert.deepEqual(r.emulator.failures(), []);
  });

  it("honours the function's maximum retry attempts and event age", async () => {
    const config = new Map<string, Partial<AsyncInvokeConfig>>([
      ['noretry', { maximumRetryAttempts: 0 }],
      ['old', { maximumEventAgeSeconds: 60 }],
    ]);
    let now = new Date('2030-01-01T00:00:00Z');
    const fail = () => {
      // Each attempt takes "a minute" of the fake clock.
      now = new Date(now.getTime() + 61_000);
      throw new Error('nope');
    };
    const r = await start(
      { noretry: fail, old: fail },
      { asyncConfig: (n) => config.get(n), now: () => now },
    );
    await r.emulator.invokeAsync('noretry', {});
    await r.emulator.drain();
    await r.emulator.invokeAsync(`arn:aws:lambda:${REGION}:${ACCOUNT}:function:old`, {});
    await r.emulator.drain();
    assert.deepEqual(
      r.emulator
        .failures()
        .map((f) => [
          f.requestContext.functionArn.split(':')[6],
          f.requestContext.condition,
          f.requestContext.approximateInvokeCount,
        ]),
      [
        ['noretry', 'RetriesExhausted', 1],
        ['old', 'EventAgeExceeded', 1],
      ],
    );
  });

  it('an unknown function is refused at once when the host can tell, otherwise recorded without retries', async () => {
    const known = await start({ f: () => 1 }, { hasFunction: (n) => n === 'f' });
    await assert.rejects(
      known.client.send(new InvokeCommand({ FunctionName: 'g', InvocationType: 'Event' })),
      ResourceNotFoundException,
    );
    await assert.rejects(known.emulator.invokeAsync('g', {}), /Function not found/);
    const blind = await start({});
    await blind.emulator.invokeAsync('g', {});
    await blind.emulator.drain();
    assert.deepEqual(
      blind.emulator.failures().map((f) => f.requestContext.approximateInvokeCount),
      [1],
    );
  });

  it('refuses an Event payload over 1 MB', async () => {
    const r = await start({ f: () => 1 });
    await assert.rejects(
      r.client.send(
        new InvokeCommand({
          FunctionName: 'f',
          InvocationType: 'Event',
          Payload: Buffer.from(JSON.stringify('x'.repeat(1024 * 1024))),
        }),
      ),
      RequestTooLargeException,
    );
  });
});
