/**
 * A sandbox that bubblewrap fails to set up is set up once more (bwrap-session.ts): under load
 * bwrap once failed to give a service's sandbox its loopback address ("Failed RTM_NEWADDR: No
 * child processes"), and the service's restart reported that instead of the app's own failure.
 * The failure cannot be made on demand, so bwrap is reached through a wrapper that fails exactly
 * as bwrap did, the first time only, and then runs the real bwrap.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findTool } from '../../functions/adapters/local/bwrap/host-tools.ts';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { SandboxUnavailableError } from '../../functions/ports/sandbox.ts';
import { sessionSpec } from '../contract/sandbox-contract.ts';

describe('a sandbox bubblewrap could not set up', () => {
  let dir: string;
  let wrapper: string;
  let failures: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-bwrap-retry-'));
    wrapper = join(dir, 'bwrap');
    failures = join(dir, 'failures');
    const real = findTool('bwrap');
    assert.ok(real, 'bubblewrap is installed');
    // Fails (as bwrap does, before the sandbox starts) while `failures` holds a count above 0.
    await writeFile(
      wrapper,
      `#!/bin/sh
if [ "$1" != "--version" ]; then
  n=$(cat '${failures}')
  if [ "$n" -gt 0 ]; then
    echo $((n - 1)) > '${failures}'
    echo 'bwrap: loopback: Failed RTM_NEWADDR: No child processes' >&2
    exit 1
  fi
fi
exec '${real}' "$@"
`,
    );
    await chmod(wrapper, 0o755);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const run = async (failFirst: number) => {
    await writeFile(failures, String(failFirst));
    const sandbox = new BwrapSandbox({ runsDir: join(dir, `runs-${failFirst}`), bwrapPath: wrapper });
    const session = await sandbox.openSession(sessionSpec());
    try {
      return await session.exec('echo ran');
    } finally {
      await session.close();
    }
  };

  it('is set up once more, and the command runs', async () => {
    const r = await run(1);
    assert.equal(r.exitCode, 0, r.stderrTail);
    assert.equal(r.stdout, 'ran\n');
    assert.equal((await readFile(failures, 'utf8')).trim(), '0', 'the first set-up failed');
  });

  it('reports bubblewrap’s own message when the second set-up fails too', async () => {
    await assert.rejects(run(2), (err: unknown) => {
      assert.ok(err instanceof SandboxUnavailableError, String(err));
      assert.match(err.message, /bubblewrap could not set up the sandbox .*Failed RTM_NEWADDR/);
      return true;
    });
  });
});
