import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { publishAlwaysOn } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

type Service = {
  id: string;
  name: string;
  state: string;
  health_status: string;
  url: string;
  agent_version: string;
  restart_count: number;
  last_restart_at: string | null;
  events: { type: string; message: string }[];
};

const SECRET_VALUE = 'dash-svc-secret-5a1e9c3b7d';
const ENV_VALUE = 'env-value-not-for-the-page';

/** Listens on PORT and writes a numbered line every 400 ms, so the page has new lines to follow. */
const APP = `
import { createServer } from 'node:http';
let n = 0;
createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening with ' + process.env.APP_TOKEN));
setInterval(() => console.log('tick ' + ++n), 400);
`;

/**
 * The Services page in Chromium against the local platform running a real always-on service (the
 * bubblewrap sandbox, as `npm start` runs it): its state, health, restarts and URL in the list;
 * its page with names (never values) of its variables and secrets, its timeline and its logs
 * following as lines arrive; restart, update to a newer version and delete, each confirmed and
 * checked through the API.
 */
describe('dashboard: services', { timeout: 300_000 }, () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let user: { key: string; accountId: string; workspaceId: string };
  let service: Service;
  const base = () => `/workspaces/${user.workspaceId}/services`;
  const get = (id: string) => p.request<Service>('GET', `${base()}/${id}`, { key: user.key });

  before(async () => {
    harness = await startDashboard();
    ({ p } = harness);
    user = await p.createAccount('svcdash', 'pro');
    const put = await p.request('PUT', `/workspaces/${user.workspaceId}/secrets`, {
      key: user.key,
      body: { name: 'APP_TOKEN', value: SECRET_VALUE },
    });
    assert.equal(put.status, 200, put.text);
    await publishAlwaysOn(p, user.key, {
      name: 'ticker',
      description: 'Ticks.',
      files: { 'server.mjs': APP },
      extra: { required_secrets: ['APP_TOKEN'] },
    });
    // Pinned to v1, so the page's update has a newer version to move to.
    const res = await p.request<Service>('POST', base(), {
      key: user.key,
      body: { agent: 'svcdash/ticker@v1', name: 'ticker', env: { GREETING: ENV_VALUE } },
    });
    assert.equal(res.status, 201, res.text);
    service = await waitFor(
      'the service running',
      async () => {
        const s = (await get(res.body.id)).body;
        return s.state === 'running' && s.health_status === 'healthy' ? s : undefined;
      },
      60_000,
      250,
    );
  });

  after(async () => {
    await harness?.close();
  });

  it('lists the service with its state, health, restarts and URL', async () => {
    const page = await harness.signedIn(user.key, '#/services');
    const table = page.getByTestId('services');
    await table.waitFor();
    const cells = (await table.locator('tbody tr').first().locator('td').allTextContents()).map((c) =>
      c.trim(),
    );
    assert.deepEqual(cells, ['ticker', 'svcdash/ticker@v1', 'running', 'healthy', '0', service.url]);
    assert.equal(await table.getByRole('link', { name: service.url }).getAttribute('href'), service.url);
    await page.context().close();
  });

  it('shows the names of its variables and secrets, never their values, its timeline, and logs that follow', async () => {
    const page = await harness.signedIn(user.key, '#/services');
    await page.getByRole('link', { name: 'ticker', exact: true }).click();
    await page.getByRole('heading', { name: 'Service: ticker' }).waitFor();
    assert.match((await page.getByTestId('service-env').textContent()) ?? '', /GREETING/);
    assert.match((await page.getByTestId('service-secrets').textContent()) ?? '', /APP_TOKEN/);
    await page.getByTestId('service-events').getByText('ready', { exact: true }).waitFor();

    const logs = page.getByTestId('log-lines');
    await logs.getByText('listening with [REDACTED]').waitFor();
    const ticks = async () =>
      (await logs.locator('.log-message').allTextContents())
        .filter((m) => /^tick \d+$/.test(m))
        .map((m) => Number(m.slice(5)));
    const before = Math.max(0, ...(await ticks()));
    // Following: lines written after the page opened arrive without a reload, each once.
    const later = await waitFor(
      'newer log lines in the page',
      async () => {
        const seen = await ticks();
        return Math.max(0, ...seen) >= before + 5 ? seen : undefined;
      },
      30_000,
      250,
    );
    assert.equal(new Set(later).size, later.length, `a line shown twice: ${later.join(' ')}`);
    const run = later.slice(later.indexOf(before));
    assert.deepEqual(
      run,
      run.map((_, i) => before + i),
      'no line missed',
    );

    const html = await page.content();
    assert.ok(!html.includes(SECRET_VALUE), 'a secret value is never in the page');
    assert.ok(!html.includes(ENV_VALUE), 'nor a variable’s value');
    await page.context().close();
  });

  it('restarts, updates to the newest version and deletes, each after confirmation', async () => {
    const page = await harness.signedIn(user.key, `#/services/${service.id}`);
    await page.getByRole('heading', { name: 'Service: ticker' }).waitFor();

    // Restart: cancelled first, nothing happens; confirmed, it restarts.
    await page.getByRole('button', { name: 'Restart', exact: true }).click();
    const restart = page.getByRole('dialog', { name: 'Restart this service?' });
    await restart.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await get(service.id)).body.last_restart_at, service.last_restart_at);
    await page.getByRole('button', { name: 'Restart', exact: true }).click();
    await restart.getByRole('button', { name: 'Restart the service' }).click();
    await restart.waitFor({ state: 'hidden' });
    const restarted = (await get(service.id)).body;
    assert.notEqual(restarted.last_restart_at, service.last_restart_at);
    assert.ok(
      restarted.events.some((e) => e.type === 'restarted'),
      JSON.stringify(restarted.events),
    );

    // A v2 is published; the pinned service stays on v1 until the page updates it.
    await publishAlwaysOn(p, user.key, {
      name: 'ticker',
      description: 'Ticks, v2.',
      files: { 'server.mjs': APP },
    });
    assert.equal((await get(service.id)).body.agent_version, 'v1');
    await page.getByRole('button', { name: 'Update to the newest version' }).click();
    await page
      .getByRole('dialog', { name: 'Update this service?' })
      .getByRole('button', { name: 'Update and restart' })
      .click();
    await waitFor('v2 in the page', async () =>
      /svcdash\/ticker@v2/.test((await page.getByTestId('service-facts').textContent()) ?? '')
        ? true
        : undefined,
    );
    assert.equal((await get(service.id)).body.agent_version, 'v2');

    // Delete: cancelled, it stays; confirmed, it is gone and the list says so.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const del = page.getByRole('dialog', { name: 'Delete this service?' });
    await del.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await get(service.id)).status, 200);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await del.getByRole('button', { name: 'Delete the service' }).click();
    await page.waitForURL(/#\/services$/);
    await page.getByText('No services in this workspace.').waitFor();
    assert.equal(errorOf(await get(service.id)).code, 'NOT_FOUND');
    await page.context().close();
  });

  it('shows the API’s error for a service that is not there, and fits a phone', async () => {
    const page = await harness.signedIn(user.key, '#/services/00000000-0000-4000-8000-000000000000', {
      viewport: { width: 375, height: 740 },
      colorScheme: 'dark',
    });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /NOT_FOUND/);
    const layout = (await page.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })',
    )) as { scrollWidth: number; width: number };
    assert.ok(
      layout.scrollWidth <= layout.width,
      `page is ${layout.scrollWidth}px wide at ${layout.width}px`,
    );
    await page.context().close();
  });
});
