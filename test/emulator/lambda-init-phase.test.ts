/**
 * The emulated Lambda counts a function's timeout from its handler's start, as Lambda does: a new
 * instance's INIT phase (the module's top level) has a limit of its own, so a slow cold start (a
 * large bundle on a loaded machine) is not a "Task timed out" that Lambda would not give; a handler
 * that runs past the timeout still is.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FunctionError, LambdaHost } from '../../functions/emulator/lambda-host.ts';

describe('the emulated Lambda: INIT apart from the timeout', () => {
  let dir: string;
  let host: LambdaHost;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-lambda-init-'));
    // INIT takes 1.5 s (the module's top level); the handler answers at once, or waits 1.5 s.
    await writeFile(
      join(dir, 'index.mjs'),
      [
        'await new Promise((r) => setTimeout(r, 1500));',
        'export const handler = async (event) => {',
        '  if (event.wait) await new Promise((r) => setTimeout(r, event.wait));',
        '  return "done";',
        '};',
        '',
      ].join('\n'),
    );
    host = new LambdaHost(
      [
        {
          name: 'slow-start',
          logName: 'SlowStart',
          arn: 'arn:aws:lambda:us-east-1:000000000000:function:slow-start',
          assetDir: dir,
          handler: 'index.handler',
          timeoutSeconds: 1,
          memoryMb: 128,
          environment: { PATH: process.env.PATH ?? '' },
          maxInstances: 1,
        },
      ],
      () => undefined,
    );
  });
  after(async () => {
    await host?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a cold start whose INIT is longer than the timeout', async () => {
    assert.equal(await host.invoke('slow-start', {}), 'done');
  });

  it('still times out a handler that runs past the timeout', async () => {
    await assert.rejects(host.invoke('slow-start', { wait: 1500 }), (err: unknown) => {
      assert.ok(err instanceof FunctionError, String(err));
      assert.match(err.message, /Task timed out after 1\.00 seconds/);
      return true;
    });
  });
});
