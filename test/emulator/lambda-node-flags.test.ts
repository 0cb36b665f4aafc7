/**
 * The emulated Lambda starts an instance's node as Lambda's Node.js runtime does (its bootstrap
 * script): the heap sized from the function's memory, a tenth of it the young generation; `gc()`
 * exposed; HTTP headers up to 80 KiB. A handler sees the same flags, and their effects, as there.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LambdaHost } from '../../functions/emulator/lambda-host.ts';

describe('the emulated Lambda: node started with the runtime’s flags', () => {
  let dir: string;
  let host: LambdaHost;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-lambda-flags-'));
    await writeFile(
      join(dir, 'index.mjs'),
      [
        "import { maxHeaderSize } from 'node:http';",
        "import { getHeapStatistics } from 'node:v8';",
        'export const handler = async () => ({',
        '  execArgv: process.execArgv,',
        '  gc: typeof globalThis.gc,',
        '  maxHeaderSize,',
        '  heapLimitMb: getHeapStatistics().heap_size_limit / 2 ** 20,',
        '});',
        '',
      ].join('\n'),
    );
    const fn = (name: string, memoryMb: number) => ({
      name,
      logName: name,
      arn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
      assetDir: dir,
      handler: 'index.handler',
      timeoutSeconds: 10,
      memoryMb,
      environment: { PATH: process.env.PATH ?? '' },
      maxInstances: 1,
    });
    host = new LambdaHost([fn('small', 128), fn('large', 1024)], () => undefined);
  });
  after(async () => {
    await host?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [name, memoryMb, semiSpaceMb, oldSpaceMb] of [
    ['small', 128, 6, 116],
    ['large', 1024, 51, 922],
  ] as const) {
    it(`gives a ${memoryMb} MB function a ${semiSpaceMb} MB semi-space and a ${oldSpaceMb} MB old space`, async () => {
      const seen = (await host.invoke(name, {})) as {
        execArgv: string[];
        gc: string;
        maxHeaderSize: number;
        heapLimitMb: number;
      };
      assert.deepEqual(seen.execArgv, [
        '--expose-gc',
        '--max-http-header-size',
        '81920',
        `--max-semi-space-size=${semiSpaceMb}`,
        `--max-old-space-size=${oldSpaceMb}`,
      ]);
      assert.equal(seen.gc, 'function');
      assert.equal(seen.maxHeaderSize, 81920);
      // V8's limit is the old space and three semi-spaces (the young generation's two and their
      // large objects'), each rounded up to a power of two: on Lambda too, above the memory at 1024.
      assert.ok(
        seen.heapLimitMb >= oldSpaceMb + 3 * semiSpaceMb && seen.heapLimitMb < oldSpaceMb + 6 * semiSpaceMb,
        `V8's heap limit: ${seen.heapLimitMb} MB`,
      );
    });
  }
});
