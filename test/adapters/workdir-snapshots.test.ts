import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { MAX_SNAPSHOT_BYTES, workdirSnapshots } from '../../functions/core/calls/workdir-snapshots.ts';
import { DEFAULT_SANDBOX_LIMITS, type SessionSpec } from '../../functions/ports/sandbox.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import { tarGzOf } from '../helpers/bundles.ts';

/**
 * A managed loop's working directory as a run carried on gets it back (core/calls/workdir-snapshots.ts),
 * in the local sandbox (bubblewrap): what a session wrote is put back in a new session of the same
 * bundle, the bundle's own files are not recorded again, and a directory over the cap is not
 * recorded at all (its archive is measured inside the sandbox, never read into the platform).
 */
describe('a working directory recorded and put back', () => {
  let dir: string;
  let sandbox: BwrapSandbox;
  let bundle: Buffer;
  let n = 0;
  const logger = createLogger('silent');
  const spec = (): SessionSpec => ({
    runId: `snap-${process.pid}-${++n}`,
    workspaceId: 'ws-a',
    env: {},
    network: 'none',
    deadlineMs: Date.now() + 30_000,
    limits: DEFAULT_SANDBOX_LIMITS,
    bundle: { data: bundle, format: 'tar.gz' },
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-snapshots-'));
    sandbox = new BwrapSandbox({ runsDir: join(dir, 'runs') });
    bundle = await tarGzOf({ 'agent.md': 'the bundle’s own file' });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('puts back what a session wrote in a new session; the bundle’s files are not recorded', async () => {
    const first = await sandbox.openSession(spec());
    let snapshot: string | undefined;
    try {
      const snaps = workdirSnapshots(first, logger);
      const wrote = await first.exec('mkdir -p notes && echo "high tide at noon" > notes/tides.txt');
      assert.equal(wrote.exitCode, 0, wrote.stderrTail);
      snapshot = await snaps.take();
      assert.ok(snapshot);
      // No archive is left behind for the agent to see.
      assert.equal((await first.exec('ls -a | grep -c agenthost-workdir || true')).stdout.trim(), '0');
    } finally {
      await first.close();
    }
    const second = await sandbox.openSession(spec());
    try {
      await workdirSnapshots(second, logger).restore(snapshot);
      assert.equal((await second.exec('cat notes/tides.txt')).stdout, 'high tide at noon\n');
      // What the snapshot holds: the written file, not the bundle's.
      await second.writeFile('probe.tgz', Buffer.from(snapshot, 'base64'));
      const names = (await second.exec('tar -tzf probe.tgz')).stdout.trim().split('\n');
      assert.deepEqual(names, ['./notes/tides.txt']);
    } finally {
      await second.close();
    }
  });

  it('records nothing for a directory whose changes pass the cap', async () => {
    const session = await sandbox.openSession(spec());
    try {
      const snaps = workdirSnapshots(session, logger);
      const mib = Math.ceil(MAX_SNAPSHOT_BYTES / 1024 / 1024) + 1;
      const wrote = await session.exec(`head -c ${mib}M /dev/urandom > noise.bin`);
      assert.equal(wrote.exitCode, 0, wrote.stderrTail);
      assert.equal(await snaps.take(), undefined);
      assert.equal((await session.exec('ls -a | grep -c agenthost-workdir || true')).stdout.trim(), '0');
    } finally {
      await session.close();
    }
  });
});
