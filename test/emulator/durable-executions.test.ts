import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type DurableContext,
  DurableExecutionApiClient,
  withDurableExecution,
} from '@aws/durable-execution-sdk-js';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { MAX_FAILED_IN_A_ROW } from '../../functions/emulator/durable-invocations.ts';
import { LambdaApiEmulator } from '../../functions/emulator/lambda-api-emulator.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Lambda's durable functions on the emulated Lambda service, judged by AWS's own durable execution
 * SDK: a handler wrapped by `withDurableExecution`, its client on the emulator's endpoint, is
 * invoked by the emulator as Lambda invokes it, and checkpoints there. An invocation that dies
 * after two steps (its function timed out, its process gone) is invoked again, and the SDK's
 * replay answers those two steps from their checkpoints: they do not run again, the third does,
 * and the execution ends with the handler's result.
 */

const FUNCTION = 'run-worker';
const credentials = { accessKeyId: 'AKIDEMULATED', secretAccessKey: 'emulated' };

describe('durable executions on the emulated Lambda service', () => {
  let emulator: LambdaApiEmulator;
  let endpoint = '';
  /** How many times each step ran, and each invocation's fate. */
  const ran = { a: 0, b: 0, c: 0 };
  let invocations = 0;
  let hangAfterB = true;

  const durableHandler = (endpointUrl: string) =>
    withDurableExecution(
      async (event: { x: number }, ctx: DurableContext) => {
        const a = await ctx.step('a', async () => {
          ran.a++;
          return event.x + 1;
        });
        const b = await ctx.step('b', async () => {
          ran.b++;
          return { doubled: a * 2 };
        });
        // The first invocation hangs here until the emulator gives up on it (a timed-out function).
        if (hangAfterB) await new Promise(() => {});
        const c = await ctx.step('c', async () => {
          ran.c++;
          return b.doubled + 100;
        });
        return { a, b, c };
      },
      {
        durableExecutionClient: new DurableExecutionApiClient(
          new LambdaClient({ region: 'us-east-1', credentials, endpoint: endpointUrl }),
        ),
      },
    );
  let handler: ReturnType<typeof durableHandler>;

  before(async () => {
    emulator = new LambdaApiEmulator({
      durableConfig: (name) => (name === FUNCTION ? { timeoutSeconds: 3600 } : undefined),
      durableRetryDelayMs: 10,
      invoke: async (_name, payload) => {
        invocations++;
        const context = {
          awsRequestId: `req-${invocations}`,
          getRemainingTimeInMillis: () => 60_000,
        };
        const answer = (handler as (e: unknown, c: unknown) => Promise<unknown>)(payload, context);
        if (!hangAfterB) return answer;
        // The function "times out" once step b's checkpoint has reached the service.
        const arn = (payload as { DurableExecutionArn: string }).DurableExecutionArn;
        await waitFor('step b checkpointed', () => {
          const ops = [...(emulator.executions.get(arn)?.operations.values() ?? [])];
          return ops.some((op) => op.Name === 'b' && op.Status === 'SUCCEEDED') ? true : undefined;
        });
        hangAfterB = false;
        throw new Error('Task timed out after 60.00 seconds');
      },
    });
    endpoint = await emulator.listen(0, '127.0.0.1');
    // The handler's client checkpoints where the emulator listens, as AWS_ENDPOINT_URL_LAMBDA says
    // to the emulated functions.
    handler = durableHandler(endpoint);
  });
  after(() => emulator.close());

  it('replays an execution whose invocation died: finished steps answer from their checkpoints', async () => {
    const client = new LambdaClient({ region: 'us-east-1', credentials, endpoint });
    const invoke = () =>
      client.send(
        new InvokeCommand({
          FunctionName: FUNCTION,
          Qualifier: 'live',
          InvocationType: 'Event',
          DurableExecutionName: 'run-0193',
          Payload: Buffer.from(JSON.stringify({ x: 4 })),
        }),
      );
    const started = await invoke();
    assert.equal(started.StatusCode, 202);
    const arn = started.DurableExecutionArn ?? '';
    assert.match(
      arn,
      /^arn:aws:lambda:us-east-1:000000000000:function:run-worker:live\/durable-execution\/run-0193\//,
    );
    // The same name again starts nothing new.
    const again = await invoke();
    assert.equal(again.DurableExecutionArn, arn);

    const execution = emulator.executions.get(arn);
    const ending = await waitFor('the execution to end', () => execution?.ending, 15_000);
    assert.equal(ending.status, 'SUCCEEDED', JSON.stringify(ending));
    assert.deepEqual(JSON.parse(ending.status === 'SUCCEEDED' ? (ending.result ?? '') : ''), {
      a: 5,
      b: { doubled: 10 },
      c: 110,
    });
    assert.equal(invocations, 2, 'invoked again after the one that died');
    assert.deepEqual(ran, { a: 1, b: 1, c: 1 }, 'no finished step ran twice');
    // A checkpoint after the end is refused, as the service refuses it.
    assert.throws(() => emulator.executions.checkpoint(arn, execution?.token ?? '', []), /has ended/);
  });
});

describe('durable executions: waits, and invocations that get nowhere', () => {
  let emulator: LambdaApiEmulator;
  let endpoint = '';
  const invoked: string[] = [];
  const handlers = new Map<string, (e: unknown, c: unknown) => Promise<unknown>>();
  const client = () => new LambdaClient({ region: 'us-east-1', credentials, endpoint });
  const durable = (fn: (event: unknown, ctx: DurableContext) => Promise<unknown>) =>
    withDurableExecution(fn, { durableExecutionClient: new DurableExecutionApiClient(client()) }) as (
      e: unknown,
      c: unknown,
    ) => Promise<unknown>;
  const start = async (name: string) => {
    const started = await client().send(
      new InvokeCommand({
        FunctionName: name,
        Qualifier: '1',
        InvocationType: 'Event',
        Payload: Buffer.from('{}'),
      }),
    );
    const execution = emulator.executions.get(started.DurableExecutionArn ?? '');
    return waitFor(`${name} to end`, () => execution?.ending, 15_000);
  };

  before(async () => {
    emulator = new LambdaApiEmulator({
      durableConfig: (name) =>
        handlers.has(name) ? { timeoutSeconds: name === 'slow' ? 1 : 60 } : undefined,
      durableRetryDelayMs: 10,
      invoke: async (name, payload) => {
        invoked.push(name);
        return handlers.get(name)!(payload, { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 });
      },
    });
    endpoint = await emulator.listen(0, '127.0.0.1');
    let steps = 0;
    handlers.set(
      'waiter',
      durable(async (_e, ctx) => {
        const before = await ctx.step('before', async () => ++steps);
        await ctx.wait('pause', { seconds: 1 });
        const after = await ctx.step('after', async () => ++steps);
        return { before, after };
      }),
    );
    handlers.set('broken', async () => {
      throw new Error('Runtime.ImportModuleError: cannot load the handler');
    });
    handlers.set(
      'slow',
      durable(async (_e, ctx) => {
        await ctx.wait('forever', { seconds: 30 });
        return 'never';
      }),
    );
  });
  after(() => emulator.close());

  it('invokes a waiting execution again once its wait is over, its steps run once each', async () => {
    // Lambda runs a durable function only by a version or an alias.
    await assert.rejects(
      client().send(
        new InvokeCommand({ FunctionName: 'waiter', InvocationType: 'Event', Payload: Buffer.from('{}') }),
      ),
      /version or an alias/,
    );
    const ending = await start('waiter');
    assert.equal(ending.status, 'SUCCEEDED', JSON.stringify(ending));
    assert.deepEqual(JSON.parse(ending.status === 'SUCCEEDED' ? (ending.result ?? '') : ''), {
      before: 1,
      after: 2,
    });
    assert.equal(invoked.filter((n) => n === 'waiter').length, 2);
  });

  it('fails an execution whose invocations fail three times in a row with no checkpoint, and times one out', async () => {
    const broken = await start('broken');
    assert.equal(broken.status, 'FAILED');
    assert.equal(invoked.filter((n) => n === 'broken').length, MAX_FAILED_IN_A_ROW);
    const slow = await start('slow');
    assert.equal(slow.status, 'TIMED_OUT');
  });
});
