/**
 * From the other side of the row cache (functions/adapters/local/sqlite-row-cache.ts): the local
 * server reads API keys from memory between requests, and looks for other processes' commits
 * (PRAGMA data_version) as each request starts (SqliteStore.asOneRequest). A key deleted through another connection
 * to the database file (as the operator CLI opens it while the server runs) must be refused by the
 * very next request, however warm the cache and whatever the timing.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { addApiKey, deleteApiKey } from '../../functions/core/api-keys/api-keys.ts';
import { SQLITE_FILE } from '../../functions/platform/local-deps.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

function connected(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The status code of the HTTP response that arrives on the socket. */
function statusOf(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match) {
        resolve(Number(match[1]));
        socket.destroy();
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`no status in: ${text}`)));
  });
}

describe('local server: a key deleted by another process stops at the next request', () => {
  let p: TestPlatform;
  let other: SqliteStore;

  before(async () => {
    p = await startTestPlatform();
    other = new SqliteStore(join(p.dataDir, SQLITE_FILE));
  });
  after(async () => {
    await other.close();
    await p.close();
  });

  it('refuses the deleted key on the first request after the delete commits, every time', async () => {
    const { accountId } = await p.createAccount('external-commit-org');
    // The other process's view of the platform: its own connection to the same file.
    const operator = { ...p.deps, store: other };
    for (let i = 0; i < 10; i++) {
      const secret = generateApiKey();
      const key = await addApiKey(p.deps, accountId, { secret, name: `k${i}`, agent: null });
      // Warm: the key's rows are in the server's cache.
      for (let n = 0; n < 3; n++)
        assert.equal((await p.request('GET', '/usage', { key: secret })).status, 200);
      // A connection opened beforehand, so that the request's bytes can be written the moment
      // the delete has committed and reach the server in its very next poll phase.
      const socket = await connected(p.url);
      // The server looks at the database in the phase where the delete's commit settles, just
      // before it (its own group commits settle there): the look the request must not trust.
      setImmediate(() => void p.deps.store.get({ pk: 'UNRELATED', sk: 'U' }));
      await deleteApiKey(operator, accountId, key.id);
      const status = statusOf(socket);
      socket.write(
        `GET /usage HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(await status, 401, `round ${i}: the deleted key was accepted`);
    }
  });
});
