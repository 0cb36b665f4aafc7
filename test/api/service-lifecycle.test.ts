import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { processesWith } from '../helpers/process.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { publishAlwaysOn } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** A service app that listens on PORT and lives until killed, and leaves a child of its own. */
const APP = `
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
spawn('sleep', ['600'], { stdio: 'ignore' });
createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');
`;

/**
 * Waits (polling, up to `ms`) until no host process carries any of `markers`, then asserts it,
 * naming what is left when some are.
 */
async function noneLeftWithin(ms: number, markers: string[]): Promise<void> {
  const left = async () =>
    (await Promise.all(markers.map((m) => processesWith(m, { environ: true })))).flat();
  await waitFor(
    'every process to end',
    async () => ((await left()).length === 0 ? true : undefined),
    ms,
  ).catch(() => undefined);
  assert.deepEqual(await left(), []);
}

/**
 * Processes end with their owner: a service's whole sandbox (the app, and whatever it started) is
 * gone once the service is deleted, however the delete races with start-up or with restarts.
 */
describe('service processes end with the service', () => {
  let p: TestPlatform;
  let owner: { key: string; ws: string };
  const base = () => `/workspaces/${owner.ws}/services`;

  before(async () => {
    p = await startTestPlatform(
      { PLATFORM_SERVICE_BACKOFF_MS: '50', PLATFORM_SERVICE_START_TIMEOUT_MS: '8000' },
      'sqlite',
      { notifier: fastNotifier() },
      { inMemory: true },
    );
    const o = await createAccount(p.deps, { org: 'lifeco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    await publishAlwaysOn(p, owner.key, {
      name: 'lingerer',
      description: 'A service that leaves a child behind',
      files: { 'server.mjs': APP },
    });
  });
  after(() => p.close());

  const deploy = async (name: string, marker: string) => {
    const res = await p.request<{ id: string }>('POST', base(), {
      key: owner.key,
      body: { agent: 'lifeco/lingerer', name, env: { LIFECYCLE_MARK: marker } },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  const remove = async (id: string) => {
    const res = await p.request('DELETE', `${base()}/${id}`, { key: owner.key });
    assert.equal(res.status, 204, res.text);
  };

  it('20 deploys each deleted at once leave no process within 5 s', { timeout: 120_000 }, async () => {
    const marker = `life-${randomUUID()}`;
    for (let i = 0; i < 20; i++) await remove(await deploy(`quick-${i}`, marker));
    // Nor a network stack (pasta names its pid file under the data directory's runs).
    await noneLeftWithin(5_000, [marker, join(p.dataDir, 'runs')]);
  });

  it('30 rapid PATCHes then a DELETE leave no process within 5 s', { timeout: 120_000 }, async () => {
    const marker = `life-${randomUUID()}`;
    const id = await deploy('patched', marker);
    const patches = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        p.request('PATCH', `${base()}/${id}`, {
          key: owner.key,
          body: { env: { LIFECYCLE_MARK: marker, ROUND: String(i) } },
        }),
      ),
    );
    for (const r of patches) assert.ok(r.status === 200 || r.status === 409, r.text);
    await remove(id);
    // Nor a network stack (pasta names its pid file under the data directory's runs).
    await noneLeftWithin(5_000, [marker, join(p.dataDir, 'runs')]);
  });
});
