import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { request } from 'undici';
import { DASHBOARD_CSP } from '../../functions/platform/dashboard-headers.ts';
import { startAlertReceiver } from '../helpers/alert-receiver.ts';
import { type DashboardHarness, signIn, startDashboard } from '../helpers/dashboard.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';

/** The budget for the first load: compressed JavaScript, as the server sends it. */
const FIRST_LOAD_JS_BUDGET = 300 * 1024;

/**
 * The dashboard in a real browser: headless Chromium driven by playwright-core against the local
 * platform serving a build of web/ made by this test (so it tests the source as it is now), with
 * data the test makes through the API: prompt-agent calls through the fake model, a failure, an
 * auto-disabled schedule. Everything stays on loopback.
 */
describe('dashboard: served at / and used in Chromium', () => {
  let harness: DashboardHarness;
  let fake: FakeLlmProviders;
  let p: TestPlatform;
  let browser: Browser;
  let user: { key: string; accountId: string; workspaceId: string };

  before(async () => {
    harness = await startDashboard();
    ({ p, fake, browser } = harness);
    user = await p.createAccount('dash', 'pro');
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: user.key,
      body: {
        name: 'greet',
        description: 'Greets someone.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Say hello to {{who}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    for (let i = 0; i < 3; i++) {
      fake.enqueue({ text: `hello ${i}` });
      const ok = await p.request('POST', '/dash/greet/v1/run', { key: user.key, body: { who: 'you' } });
      assert.equal(ok.status, 200, ok.text);
    }
    // A schedule that turns itself off after one failure, and fails once.
    const schedule = await p.request<{ id: string }>('POST', `/workspaces/${user.workspaceId}/schedules`, {
      key: user.key,
      body: {
        agent: 'dash/greet',
        cron_expression: '0 9 * * *',
        input_data: { who: 'cron' },
        max_consecutive_failures: 1,
      },
    });
    assert.equal(schedule.status, 201, schedule.text);
    fake.enqueue({ status: 500, errorMessage: 'upstream is down' });
    const failed = await p.request<{ status: string }>(
      'POST',
      `/workspaces/${user.workspaceId}/schedules/${schedule.body.id}/trigger`,
      { key: user.key, body: {} },
    );
    assert.equal(failed.body.status, 'error', failed.text);
  });

  after(async () => {
    await harness?.close();
  });

  it('serves the page with a strict policy and hashed assets as immutable; the API keeps its routes', async () => {
    const page = await fetch(`${p.url}/`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('content-security-policy'), DASHBOARD_CSP);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    const html = await page.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const asset = await fetch(`${p.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(asset.headers.get('content-encoding'), 'gzip');
    assert.equal(asset.headers.get('x-content-type-options'), 'nosniff');
    // The build's own brotli form (scripts/build-web.ts), served as it is: none made per request.
    // (undici's request, not fetch: fetch would decompress it.)
    const brotli = await request(`${p.url}${script}`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(brotli.headers['content-encoding'], 'br');
    const sent = Buffer.from(await brotli.body.arrayBuffer());
    assert.ok(
      sent.equals(readFileSync(join(harness.buildDir, `${script}.br`))),
      'the build’s form, byte for byte',
    );
    assert.equal((await fetch(`${p.url}${script}`, { method: 'HEAD' })).status, 200);

    // What is not a dashboard file is the API's, as before.
    const health = await p.request('GET', '/health', { key: null });
    assert.equal(health.status, 200);
    assert.equal(errorOf(await p.request('GET', '/assets/missing.js', { key: null })).code, 'NOT_FOUND');
    assert.equal(errorOf(await p.request('POST', '/', { key: null })).code, 'NOT_FOUND');
    assert.equal(errorOf(await p.request('GET', '/dash/greet/v1/run')).code, 'METHOD_NOT_ALLOWED');
  });

  it('shows the API’s error for a wrong key and keeps it nowhere', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${p.url}/`);
    const wrong = 'ahk_not_a_real_key_000000000000000000000000';
    const direct = errorOf(await p.request('GET', '/workspaces', { key: wrong }));
    await signIn(page, wrong);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.match(text, /UNAUTHORIZED/);
    assert.ok(text.includes(direct.message), text);
    assert.equal(await page.evaluate(() => sessionStorage.length + localStorage.length), 0);
    await context.close();
  });

  it('signs in by keyboard, keeps the key in session storage only, and shows the overview', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scripts: { url: string; bytes: number; encoding: string | undefined }[] = [];
    page.on('response', (res) => {
      if (!res.url().endsWith('.js')) return;
      const h = res.headers();
      scripts.push({ url: res.url(), bytes: Number(h['content-length']), encoding: h['content-encoding'] });
    });
    await page.goto(`${p.url}/`);
    // Keyboard only: the key field is the first stop, Enter submits.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement?.id'), 'api-key');
    await page.keyboard.type(user.key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // The first load's JavaScript, compressed as the server sent it.
    assert.ok(scripts.length > 0);
    for (const s of scripts) assert.equal(s.encoding, 'br', s.url);
    const total = scripts.reduce((n, s) => n + s.bytes, 0);
    assert.ok(total < FIRST_LOAD_JS_BUDGET, `first load ${total} bytes of compressed JavaScript`);

    // Today's quotas: 3 calls and one scheduled run (a call too) against the pro tier's limits.
    const calls = page.getByTestId('quota-calls');
    await calls.waitFor();
    const summary = await p.request<{ quota: { used: number; limit: number } }>('GET', '/usage', {
      key: user.key,
    });
    assert.match(
      (await calls.textContent()) ?? '',
      new RegExp(`${summary.body.quota.used}\\s*of ${summary.body.quota.limit.toLocaleString('en-US')}`),
    );
    assert.ok(summary.body.quota.used >= 4);
    await page.getByTestId('quota-sandbox').waitFor();

    // The chart's numbers: 14 days, today's with the calls and the failure.
    const rows = page.getByTestId('calls-by-day').locator('tbody tr');
    assert.equal(await rows.count(), 14);
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = (await rows.last().locator('th, td').allTextContents()).map((s) => s.trim());
    assert.deepEqual(todayRow, [today, '4', '1', '0']);
    assert.match(
      (await page.locator('figure.chart svg').getAttribute('aria-label')) ?? '',
      /4 calls, 1 failed/,
    );

    // The failure with its error code; the auto-disabled schedule; no services.
    const failures = page.getByTestId('recent-failures');
    await failures.waitFor();
    assert.match((await failures.textContent()) ?? '', /dash\/greet@v1.*error.*LLM_ERROR/s);
    const disabled = page.getByTestId('auto-disabled-schedules');
    await disabled.waitFor();
    assert.match(
      (await disabled.textContent()) ?? '',
      /dash\/greet.*0 9 \* \* \*.*after 1 failure in a row/s,
    );
    await page.getByText('No services in this workspace.').waitFor();

    // The key: in this tab's session storage, nowhere else.
    const stored = await page.evaluate(() => ({
      session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)),
      local: localStorage.length,
    }));
    assert.ok(stored.session.includes(user.key));
    assert.equal(stored.local, 0);
    assert.ok(!page.url().includes(user.key));
    assert.ok(!(await page.content()).includes(user.key), 'the key is not in the page');

    // The workspace switcher lists the caller's workspaces.
    const switcher = page.getByLabel('Workspace', { exact: true });
    assert.equal(await switcher.count(), 1, 'the switcher’s name is “Workspace”, whatever is chosen');
    const options = await switcher.locator('option').allTextContents();
    assert.deepEqual(options, ['dash (personal) · owner']);

    // Sign-out forgets the key.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    await context.close();
  });

  it('shows a page that fails to render as an error with a way back, never a blank page', async () => {
    const page = await harness.open();
    // An answer shaped other than the page expects: the usage summary without its quotas.
    await page.route(`${p.url}/usage`, (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: '{}' }),
    );
    await signIn(page, user.key);
    const alert = page.getByRole('alert').filter({ hasText: 'The page could not be shown' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /PAGE_ERROR/);
    // The rest of the app still works: the navigation and the workspace switcher are there.
    await page.getByRole('heading', { name: 'This page failed' }).waitFor();
    assert.equal(await page.getByLabel('Workspace').count(), 1);
    await page.unroute(`${p.url}/usage`);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('quota-calls').waitFor();
    await page.context().close();
  });

  it('follows a link changed the moment the signed-in app first shows, before its effects have run', async () => {
    // The route hook listens for hashchange from an effect, which runs after the first paint; a
    // change in between (a quick click, a test's goto right after the overview showed) was lost
    // and the app stayed on the overview. A MutationObserver sets the hash as soon as the
    // overview's heading is in the DOM: a microtask after the render, before that effect.
    const page = await harness.open();
    // In the page (a string: the tests are type-checked without the DOM's types).
    await page.evaluate(`{
      const observer = new MutationObserver(() => {
        if ([...document.querySelectorAll('h1')].some((h) => h.textContent === 'Overview')) {
          observer.disconnect();
          window.location.hash = '#/tasks';
        }
      });
      observer.observe(document.body, { childList: true, subtree: true });
    }`);
    await signIn(page, user.key);
    await page.getByRole('heading', { name: 'Tasks' }).waitFor({ timeout: 10_000 });
    await page.context().close();
  });

  it('shows a run’s answer as the model writes it, then its result; lists it; cancels a running one', async () => {
    const start = async () => {
      const res = await p.request<{ run_id: string }>('POST', '/dash/greet/v1/run', {
        key: user.key,
        body: { who: 'a run' },
        headers: { prefer: 'respond-async' },
      });
      assert.equal(res.status, 202, res.text);
      return res.body.run_id;
    };
    fake.enqueue({ text: 'one two three', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 2_500 });
    // Told when it ends: the run names its webhook, shown without its query (the receiver's token).
    const secret = await p.request('POST', '/api-keys/webhook-secret', { key: user.key });
    assert.equal(secret.status, 201, secret.text);
    const receiver = await startAlertReceiver();
    const started = await p.request<{ run_id: string }>('POST', '/dash/greet/v1/run', {
      key: user.key,
      body: { who: 'a run' },
      headers: { prefer: 'respond-async', 'x-platform-webhook': `${receiver.url}?token=t0ken` },
    });
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    const page = await harness.signedIn(user.key, `#/runs/${id}`);
    assert.equal(await page.getByTestId('run-webhook').textContent(), receiver.url);
    const text = page.getByTestId('run-text');
    // The first words show while the run is still running: followed live, not read at its end.
    await text.filter({ hasText: /^one/ }).waitFor();
    assert.equal(await page.getByTestId('run-status').textContent(), 'running');
    await page.getByTestId('run-result').waitFor({ timeout: 20_000 });
    // Its events are read apart from the run (every half second): the last piece follows soon.
    await text.filter({ hasText: /^one two three$/ }).waitFor();
    assert.equal(await page.getByTestId('run-status').textContent(), 'succeeded');
    assert.match((await page.getByTestId('run-result').textContent()) ?? '', /"text": "one two three"/);
    await page.getByRole('link', { name: '← Runs' }).click();
    const row = page.getByTestId('runs').locator('tbody tr').first();
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /dash\/greet\/v1\s*succeeded/);
    await receiver.waitFor(1, 10_000);
    await receiver.close();

    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.setResponder(async () => {
      await gate;
      return { text: 'late' };
    });
    try {
      const held = await start();
      await page.goto(`${p.url}/#/runs/${held}`);
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await page
        .getByTestId('run-status')
        .filter({ hasText: /^cancelled$/ })
        .waitFor();
    } finally {
      release();
      fake.setResponder(undefined);
    }
    await page.context().close();
  });

  it('fits a phone’s width and follows a dark colour scheme', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
    const page = await context.newPage();
    await page.goto(`${p.url}/`);
    await signIn(page, user.key);
    await page.getByTestId('recent-failures').waitFor();
    // Evaluated in the page (this file is type-checked without the DOM's types).
    const layout = (await page.evaluate(`({
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
      background: getComputedStyle(document.body).backgroundColor,
    })`)) as { scrollWidth: number; width: number; background: string };
    assert.ok(
      layout.scrollWidth <= layout.width,
      `page is ${layout.scrollWidth}px wide at ${layout.width}px`,
    );
    assert.equal(layout.background, 'rgb(21, 23, 28)');
    await context.close();
  });
});
