import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { removeOrphanTempFiles, tempPrefix } from '../../functions/edge/temp-files.ts';

describe('request temporaries of a killed platform', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('are removed at the next start; a live process’s are kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-temp-test-'));
    dirs.push(dir);
    // A pid that was alive and is gone: a process that has exited.
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout.trim());
    assert.ok(deadPid > 0);
    const orphanBody = join(dir, `agenthost-body-${deadPid}-0b7e`);
    const orphanCall = join(dir, `agenthost-call-${deadPid}-Xy12Ab`);
    const mine = join(dir, `${tempPrefix('body')}c0ffee`);
    const unrelated = join(dir, 'agenthost-bundles-123-abc');
    await writeFile(orphanBody, 'half a body');
    await mkdir(orphanCall);
    await writeFile(join(orphanCall, 'file-0'), 'half a file');
    await writeFile(mine, 'in use');
    await writeFile(unrelated, 'not ours to judge');
    assert.equal(await removeOrphanTempFiles(dir), 2);
    assert.equal(existsSync(orphanBody), false);
    assert.equal(existsSync(orphanCall), false);
    assert.equal(existsSync(mine), true, 'a live process keeps its files');
    assert.equal(existsSync(unrelated), true);
  });
});
