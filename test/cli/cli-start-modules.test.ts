import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/process.ts';

const RECORDER = new URL('../helpers/record-module-loads.ts', import.meta.url).href;

/**
 * A CLI start loads only what its command runs (docs/cli.md "Start-up"): the command tree, the SDK
 * and the command's own modules, not the platform's schemas (zod, 95 modules), its settings or
 * tar. Each of them once reached every start through one import of a constant or a class.
 */
describe('the CLI loads only what a command runs', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-cli-loads-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The module URLs a CLI run with `args` loaded. */
  async function loads(args: string[]): Promise<string[]> {
    const file = join(dir, `${args.join('-')}.txt`);
    // tasks list fails on the key: what the start loaded is the point, not the answer.
    await runCli(
      args,
      {
        RECORD_MODULE_LOADS: file,
        AGENTHOST_URL: 'http://127.0.0.1:9',
        AGENTHOST_API_KEY: 'not-a-key',
        XDG_CONFIG_HOME: join(dir, 'none'),
      },
      { nodeArgs: ['--import', RECORDER] },
    );
    return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  }

  for (const args of [['--help'], ['tasks', 'list'], ['schedules', 'runs', '--help'], ['usage', '--help']]) {
    it(`agenthost ${args.join(' ')} loads neither zod, the settings nor tar`, async () => {
      const loaded = await loads(args);
      assert.ok(
        loaded.some((u) => u.endsWith('/functions/cli/program.ts')),
        'the recorder saw the CLI load',
      );
      const heavy = loaded.filter((u) =>
        /\/node_modules\/(zod|tar)\/|\/functions\/(platform|ports)\/config\.ts$/.test(u),
      );
      assert.deepEqual(heavy.slice(0, 3), [], `${heavy.length} such modules`);
      // The command tree is one file a command (functions/cli/commands/<group>/), about 60 small
      // modules; zod alone would add 95.
      assert.ok(loaded.length < 200, `${loaded.length} modules`);
    });
  }
});
