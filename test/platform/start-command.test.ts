/**
 * The ways the platform ships to start (`npm start`, `npm run start:emulated`) run node with V8's
 * young generation bounded to 16 MB semi-spaces. Node's default lets each grow to 64 MB, which at
 * concurrency 64 was most of the platform's RSS; the bound takes much of it off at the same CPU per
 * call (docs/performance.md, "Call gateway overhead", item 10). The bin keeps a plain
 * `#!/usr/bin/env node`: a flag in a shebang needs `env -S`, which BusyBox lacks, and the CLI must
 * run everywhere. Each command is run as it ships, with `--help` so nothing is started; a hook in
 * NODE_OPTIONS reports the flags node got.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// No space in it: NODE_OPTIONS splits on spaces.
const HOOK = `--import=data:text/javascript,console.error('NODE-FLAGS',JSON.stringify({argv:process.argv.slice(1),execArgv:process.execArgv}))`;

/** The flags of the node process that ran bin/agenthost.ts, as the hook reported them. */
async function agenthostFlags(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string[]> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_OPTIONS: HOOK },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, output);
  const reports = [...output.matchAll(/^NODE-FLAGS (.*)$/gm)].map(
    (m) => JSON.parse(m[1] as string) as { argv: string[]; execArgv: string[] },
  );
  const platform = reports.filter((r) => r.argv.some((a) => a.endsWith('bin/agenthost.ts')));
  assert.equal(platform.length, 1, output);
  return (platform[0] as { execArgv: string[] }).execArgv;
}

describe('the shipped start commands bound the young generation', () => {
  it('npm start', async () => {
    assert.deepEqual(await agenthostFlags('npm', ['start', '--', '--help']), ['--max-semi-space-size=16']);
  });

  it('npm run start:emulated', async () => {
    assert.deepEqual(await agenthostFlags('npm', ['run', 'start:emulated', '--', '--help']), [
      '--max-semi-space-size=16',
    ]);
  });
});
