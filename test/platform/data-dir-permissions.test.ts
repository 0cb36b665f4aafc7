/**
 * The data dir is its owner's alone (functions/platform/data-dir-permissions.ts), seen as another
 * local user would: the modes of everything `npm start` leaves there, on a new data dir and on one
 * an older version made readable by everyone.
 */
import assert from 'node:assert/strict';
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { startPlatformProcess } from '../helpers/process.ts';

/** The bubblewrap sandbox's synthetic /etc files: read by the sandbox's own user (docs/security.md). */
const IDENTITY = join('runs', '.identity');

/** Every entry under `dir` (not following symlinks), with its permission bits. */
async function modes(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const walk = async (path: string) => {
    for (const name of await readdir(path)) {
      const full = join(path, name);
      const entry = await lstat(full);
      if (entry.isSymbolicLink()) continue;
      found.set(relative(dir, full), entry.mode & 0o777);
      if (entry.isDirectory()) await walk(full);
    }
  };
  found.set('.', (await lstat(dir)).mode & 0o777);
  await walk(dir);
  return found;
}

/** The entries other users could read, write or list: any group or other bit. */
function openToOthers(all: Map<string, number>): string[] {
  return [...all]
    .filter(([path, mode]) => mode & 0o077 && path !== IDENTITY && !path.startsWith(`${IDENTITY}/`))
    .map(([path, mode]) => `${path} ${mode.toString(8)}`);
}

describe('the data dir is its owner’s alone', () => {
  let home: string;
  let dataDir: string;
  const ownerKey = generateApiKey();
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-data-modes-'));
    dataDir = join(home, 'data');
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('a new data dir: 0700, and everything the platform writes there 0600 (directories 0700)', {
    timeout: 90_000,
  }, async (t) => {
    const platform = await startPlatformProcess({
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: ownerKey,
    });
    t.after(() => platform.stop('SIGKILL'));
    // A bundle stored too.
    const auth = { authorization: `Bearer ${ownerKey}` };
    const created = await fetch(`${platform.url}/agents?allow_no_secrets=true`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'stored',
        type: 'tool',
        description: 'Has a bundle.',
        supported_providers: ['any'],
        runtime: { command: 'node tool.mjs' },
      }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: string };
    const uploaded = await fetch(`${platform.url}/agents/${id}/upload`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/gzip' },
      body: new Uint8Array(await bundleOf({ 'tool.mjs': 'console.log("{}")' })),
    });
    assert.equal(uploaded.status, 200, await uploaded.text());

    const all = await modes(dataDir);
    for (const expected of [
      'agenthost.db',
      'agenthost.db-wal',
      'agenthost.db-shm',
      'vault.key',
      'platform.lock',
    ]) {
      assert.ok(all.has(expected), `${expected} is there: ${[...all.keys()].join(', ')}`);
    }
    assert.ok(
      [...all.keys()].some((p) => p.startsWith('bundles/') && all.get(p) === 0o600),
      'a stored bundle',
    );
    assert.equal(all.get('.'), 0o700);
    assert.deepEqual(openToOthers(all), []);
    // The one exception: public, synthetic and read by another user (the sandbox's), under 0700 runs/.
    assert.equal(all.get('runs'), 0o700);
    for (const [path, mode] of all) {
      if (path.startsWith(`${IDENTITY}/`)) {
        assert.match(path, /\/(passwd|group|hosts|nsswitch\.conf)$/);
        assert.equal(mode, 0o644);
      }
    }
    assert.doesNotMatch(platform.stdout(), /other users could read/, 'nothing to tighten');
    await platform.stop('SIGKILL');
  });

  it('a data dir an older version left readable by everyone is made its owner’s at start, and says so', {
    timeout: 90_000,
  }, async (t) => {
    // What earlier versions left, and more: every directory 755, every file 644.
    for (const [path, mode] of await modes(dataDir)) {
      if (path === IDENTITY || path.startsWith(`${IDENTITY}/`)) continue;
      await chmod(join(dataDir, path), mode | (mode & 0o100 ? 0o055 : 0o044));
    }
    const before = openToOthers(await modes(dataDir));
    for (const loose of ['. 755', 'agenthost.db 644', 'vault.key 644', 'bundles 755'])
      assert.ok(before.includes(loose), loose);

    const platform = await startPlatformProcess({ PLATFORM_DATA_DIR: dataDir });
    t.after(() => platform.stop('SIGKILL'));
    assert.match(
      platform.stdout(),
      new RegExp(
        `Data dir ${dataDir}: \\d+ entries other users could read or list .* are now its owner's only`,
      ),
    );
    const all = await modes(dataDir);
    assert.equal(all.get('.'), 0o700);
    assert.deepEqual(openToOthers(all), []);
    // The sandbox's identity files are still readable by the sandbox's user.
    assert.equal(all.get(join(IDENTITY, 'passwd')), 0o644);
    // The owner key still works: nothing was lost on the way.
    const res = await fetch(`${platform.url}/tasks`, { headers: { authorization: `Bearer ${ownerKey}` } });
    assert.equal(res.status, 200);
    await platform.stop('SIGKILL');
  });
});
