/**
 * The SQLite Store shared by two instances on one file (the CLI and the server), and by two
 * processes: atomic adds never lost.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';

describe('SqliteStore shared by two processes', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-shared-'));
    file = join(dir, 'store.db');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('two instances on one file (the CLI and the server): 100 interleaved atomicAdd each make 200', async () => {
    const cli = new SqliteStore(file);
    const server = new SqliteStore(file);
    const key = { pk: 'shared', sk: 'interleaved' };
    try {
      const adds: Promise<number>[] = [];
      for (let i = 0; i < 100; i++) adds.push(cli.atomicAdd(key, 'n', 1), server.atomicAdd(key, 'n', 1));
      await Promise.all(adds);
      assert.equal((await cli.get(key))?.n, 200);
      assert.equal((await server.get(key))?.n, 200);
    } finally {
      await cli.close();
      await server.close();
    }
  });

  it('a second OS process adding concurrently with this one: exactly 200', async () => {
    const key = { pk: 'shared', sk: 'processes' };
    const storeUrl = new URL('../../functions/adapters/local/sqlite-store.ts', import.meta.url).href;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(storeUrl)});
      const store = new SqliteStore(${JSON.stringify(file)});
      process.stdout.write('ready\\n');
      for (let i = 0; i < 100; i++) {
        await store.atomicAdd(${JSON.stringify(key)}, 'n', 1);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await store.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('error', reject);
      child.once('exit', () => reject(new Error(`child exited before starting: ${stderr}`)));
    });
    const store = new SqliteStore(file);
    try {
      for (let i = 0; i < 100; i++) {
        await store.atomicAdd(key, 'n', 1);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(await exited, 0, stderr);
      assert.equal((await store.get(key))?.n, 200);
    } finally {
      await store.close();
    }
  });
});
