import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { removeOrphanTempFiles, tempPrefix } from '../../functions/edge/temp-files.ts';

/*
 * Request temporaries (functions/edge/temp-files.ts), beside test/platform/temp-files.test.ts
 * (a dead process's bodies and call files removed, a live one's and others' kept): the name a body
 * is spooled under is one the next start's sweep knows, and a missing directory is nothing to sweep.
 */

describe('request temporaries (edge unit)', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('sweeps a body spooled under tempPrefix once its process is gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-temp-edge-'));
    dirs.push(dir);
    const gone = Number(
      spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout,
    );
    assert.ok(gone > 0);
    const prefix = tempPrefix('body');
    assert.ok(prefix.includes(`-${process.pid}-`), 'the prefix names its process');
    const orphan = join(dir, `${prefix.replace(`-${process.pid}-`, `-${gone}-`)}0b7e`);
    await writeFile(orphan, 'half a body');
    assert.equal(await removeOrphanTempFiles(dir), 1);
    assert.equal(existsSync(orphan), false);
  });

  it('leaves an entry it cannot remove and sweeps the others, without throwing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-temp-edge-'));
    dirs.push(dir);
    const gone = Number(
      spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout,
    );
    const theirs = join(dir, `agenthost-body-${gone}-theirs`);
    const ours = join(dir, `agenthost-call-${gone}-ours`);
    await writeFile(theirs, 'another user’s body');
    await writeFile(ours, 'a body');
    // What rm meets in a shared /tmp for another user's file (EPERM: the sticky bit), which root,
    // running the tests, never meets.
    const remove = async (path: string) => {
      if (path === theirs)
        throw Object.assign(new Error(`EPERM: operation not permitted, unlink '${path}'`), { code: 'EPERM' });
      await rm(path, { force: true });
    };
    assert.equal(await removeOrphanTempFiles(dir, remove), 1);
    assert.equal(existsSync(ours), false);
    assert.equal(existsSync(theirs), true);
  });

  it('finds nothing to remove in a directory that does not exist', async () => {
    assert.equal(await removeOrphanTempFiles(join(tmpdir(), 'agenthost-no-such-dir-edge')), 0);
  });
});
