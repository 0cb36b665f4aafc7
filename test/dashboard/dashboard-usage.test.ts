import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';
import type { FakeLlmProviders } from '../helpers/fake-llm-providers.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

type Account = { key: string; accountId: string; workspaceId: string };
type Stats = { calls: number; successes: number; errors: number; timeouts: number; total_tokens: number };

/** The cells of a table's body rows, trimmed. */
async function rowsOf(table: Locator): Promise<string[][]> {
  // Attached, not visible: the by-day numbers sit in a closed <details>.
  await table.waitFor({ state: 'attached' });
  const rows = table.locator('tbody tr');
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    out.push((await rows.nth(i).locator('th, td').allTextContents()).map((s) => s.trim()));
  }
  return out;
}

/** A definition list's value for a term (the totals). */
async function totalOf(page: Page, term: string): Promise<string> {
  const item = page
    .getByTestId('usage-totals')
    .locator('div')
    .filter({ has: page.getByText(term, { exact: true }) });
  return ((await item.locator('dd').textContent()) ?? '').trim();
}

const n = (v: number) => v.toLocaleString('en-US');

/**
 * The Usage page in Chromium, against calls the test makes through the API: a seller (A) with a
 * free private agent it calls itself (with and without a tenant, one failing) and a public paid
 * agent; a buyer (B) who tops up and calls the paid one (one call failing, so refunded). Every
 * number on the page is compared with what the API answers for the same range.
 */
describe('dashboard: the Usage page', () => {
  let harness: DashboardHarness;
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let seller: Account;
  let buyer: Account;
  // The days as the platform's clock tells them (it stands still: the calls are all of its day),
  // and the browser's clock set to it: a run that crosses midnight UTC reads the same range.
  let today = '';
  let thirtyDaysAgo = '';
  let range = '';
  const dayBefore = (days: number) =>
    new Date(p.clock.now().getTime() - days * 86_400_000).toISOString().slice(0, 10);
  /** The page at `hash`, signed in with `key`, its browser's clock the platform's. */
  const usagePage = async (
    key: string,
    hash: string,
    options?: Parameters<DashboardHarness['signedIn']>[2],
  ) => {
    const page = await harness.signedIn(key, undefined, options);
    await page.clock.setFixedTime(p.clock.now());
    await page.goto(`${p.url}/${hash}`);
    return page;
  };
  /** Calls the seller makes to its own free agent: more than one page of records (50). */
  const OWN_CALLS = 52;

  const call = async (who: Account, path: string, tenant?: string, fail = false) => {
    // The platform's clock stands still unless moved: each call a moment later, so "newest first" is
    // the order they were made in.
    p.clock.advance(10);
    fake.enqueue(fail ? { status: 500, errorMessage: 'upstream is down' } : { text: 'ok' });
    return p.request('POST', path, {
      key: who.key,
      body: {},
      headers: tenant ? { 'x-platform-tenant': tenant } : {},
    });
  };

  before(async () => {
    harness = await startDashboard();
    ({ p, fake } = harness);
    today = dayBefore(0);
    thirtyDaysAgo = dayBefore(29);
    range = `from=${thirtyDaysAgo}&to=${today}`;
    seller = await p.createAccount('seller', 'pro');
    buyer = await p.createAccount('buyer', 'pro');
    for (const agent of [
      { name: 'greet', description: 'Greets.', prompt_template: 'Say hello' },
      {
        name: 'oracle',
        description: 'Paid answers.',
        prompt_template: 'Answer',
        is_public: true,
        price_credits: 5,
      },
    ]) {
      const published = await p.request('POST', '/agents?allow_no_secrets=true', {
        key: seller.key,
        body: { ...agent, supported_providers: ['openai'], default_models: { openai: 'gpt-test-mini' } },
      });
      assert.equal(published.status, 201, published.text);
    }
    for (let i = 0; i < OWN_CALLS; i++) {
      const res = await call(seller, '/seller/greet/v1/run', i < 2 ? 'customer-42' : undefined, i === 0);
      assert.equal(res.status, i === 0 ? 502 : 200, res.text);
    }
    // The buyer pays: a top-up, then two paid calls and one the platform fails (refunded).
    const co = await p.request<{ checkout_url: string }>('POST', '/billing/checkout', {
      key: buyer.key,
      body: { credits: 500 },
    });
    assert.equal(co.status, 201, co.text);
    await p.request('POST', `${new URL(co.body.checkout_url).pathname}/confirm`, { key: null });
    assert.equal((await call(buyer, '/seller/oracle/v1/run', 'shop-7')).status, 200);
    assert.equal((await call(buyer, '/seller/oracle/v1/run')).status, 200);
    assert.equal((await call(buyer, '/seller/oracle/v1/run', undefined, true)).status, 502);
  });

  after(async () => {
    await harness?.close();
  });

  it('shows my calls over the last 30 days: totals, by day, by agent, by tenant, compute, records with Load more', async () => {
    const page = await usagePage(seller.key, '#/usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    // The default range: the last 30 days, today included.
    assert.equal(await page.getByLabel('From (UTC)').inputValue(), thirtyDaysAgo);
    assert.equal(await page.getByLabel('To (UTC)').inputValue(), today);

    const summary = await p.request<{ totals: Stats & { avg_duration_ms: number } }>(
      'GET',
      `/usage?${range}`,
      {
        key: seller.key,
      },
    );
    assert.equal(summary.body.totals.calls, OWN_CALLS);
    await page.getByTestId('usage-totals').waitFor();
    assert.equal(await totalOf(page, 'Calls'), n(summary.body.totals.calls));
    assert.equal(await totalOf(page, 'Succeeded'), n(summary.body.totals.successes));
    assert.equal(await totalOf(page, 'Errors'), n(summary.body.totals.errors));
    assert.match(
      await totalOf(page, 'Tokens (in / out)'),
      new RegExp(`^${n(summary.body.totals.total_tokens)} `),
    );

    // Calls by day: 30 rows, today's as the timeseries gives it.
    const series = await p.request<{ buckets: (Stats & { start: string })[] }>(
      'GET',
      `/usage/timeseries?${range}&granularity=day`,
      { key: seller.key },
    );
    const days = await rowsOf(page.getByTestId('calls-by-day'));
    assert.equal(days.length, 30);
    const last = series.body.buckets.at(-1) as Stats & { start: string };
    assert.deepEqual(days.at(-1), [today, String(last.calls), String(last.errors), String(last.timeouts)]);
    assert.deepEqual(days.at(-1)?.slice(1), [String(OWN_CALLS), '1', '0']);

    // By agent and by tenant: the API's groups, in its order.
    const byAgent = await p.request<{ groups: (Stats & { key: string })[] }>(
      'GET',
      `/usage/breakdown?${range}&group_by=agent`,
      { key: seller.key },
    );
    const agentRows = await rowsOf(page.getByTestId('usage-by-agent'));
    assert.deepEqual(
      agentRows.map((r) => r.slice(0, 4)),
      byAgent.body.groups.map((g) => [g.key, n(g.calls), n(g.successes), n(g.errors + g.timeouts)]),
    );
    assert.deepEqual(agentRows[0]?.slice(0, 4), [
      'seller/greet',
      String(OWN_CALLS),
      String(OWN_CALLS - 1),
      '1',
    ]);
    const tenants = await p.request<{ tenants: (Stats & { tenant: string })[] }>(
      'GET',
      `/usage/tenants?${range}`,
      {
        key: seller.key,
      },
    );
    const tenantRows = await rowsOf(page.getByTestId('usage-by-tenant'));
    assert.deepEqual(
      tenantRows.map((r) => r.slice(0, 2)),
      tenants.body.tenants.map((t) => [t.tenant, n(t.calls)]),
    );
    assert.deepEqual(
      tenantRows.map((r) => r.slice(0, 2)),
      [
        ['(none)', String(OWN_CALLS - 2)],
        ['customer-42', '2'],
      ],
    );

    // Compute: prompt agents use no sandbox; the page says what the API says.
    const compute = await p.request<{ sandbox_calls: number; compute_ms: number }>(
      'GET',
      `/usage/compute?${range}`,
      { key: seller.key },
    );
    assert.match(
      (await page.getByTestId('compute-totals').textContent()) ?? '',
      new RegExp(`${compute.body.sandbox_calls} sandbox runs, ${compute.body.compute_ms} ms of compute`),
    );
    assert.equal(compute.body.compute_ms, 0);
    await page.getByText('No sandbox compute in this range').waitFor();

    // Records: the newest 50 first, then Load more reads the rest; the failure with its code.
    const records = page.getByTestId('call-records');
    assert.equal((await rowsOf(records)).length, 50);
    await page.getByText('50 shown').waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText(`${OWN_CALLS} shown`).waitFor();
    const all = await rowsOf(records);
    assert.equal(all.length, OWN_CALLS);
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);
    const oldest = all.at(-1) as string[];
    assert.deepEqual(
      [oldest[1], oldest[2], oldest[3], oldest[4], oldest[7]],
      ['seller/greet@v1', 'customer-42', 'error', 'LLM_ERROR', '0'],
    );

    // Only the failures: the API's status filter, the one failed call of many.
    await page.getByLabel('Show').selectOption('failed');
    await page.getByText('1 shown').waitFor();
    const failedRows = await rowsOf(records);
    assert.deepEqual(
      failedRows.map((r) => [r[1], r[3], r[4]]),
      [['seller/greet@v1', 'error', 'LLM_ERROR']],
    );
    await page.getByLabel('Show').selectOption('timeout');
    await page.getByText('No such calls in this range.').waitFor();
    await page.context().close();
  });

  it('shows the buyer’s paid calls with their credits and tenant', async () => {
    const page = await usagePage(buyer.key, '#/usage');
    const rows = await rowsOf(page.getByTestId('call-records'));
    const logs = await p.request<{ logs: { status: string; credits: number; tenant: string | null }[] }>(
      'GET',
      `/usage/logs?${range}`,
      { key: buyer.key },
    );
    assert.deepEqual(
      rows.map((r) => [r[1], r[2], r[3], r[7]]),
      logs.body.logs.map((l) => ['seller/oracle@v1', l.tenant ?? '—', l.status, String(l.credits)]),
    );
    assert.deepEqual(
      rows.map((r) => r[7]),
      ['0', '5', '5'],
      'the failed call refunded, two paid',
    );
    await page.context().close();
  });

  it('shows the author’s side: the buyer’s calls to the seller’s agents, by caller, and the earnings', async () => {
    const page = await usagePage(seller.key, '#/usage');
    await page.getByRole('link', { name: 'Calls to my agents' }).click();
    await page.getByRole('heading', { name: 'Totals and earnings' }).waitFor();
    assert.ok(page.url().endsWith('#/usage/author'));

    const summary = await p.request<{ totals: Stats; callers: number; earnings_credits: number }>(
      'GET',
      `/author-usage?${range}`,
      { key: seller.key },
    );
    assert.equal(summary.body.earnings_credits, 10, 'two paid calls of 5; the failed one refunded');
    await page.getByTestId('author-earnings').waitFor();
    assert.equal(await page.getByTestId('author-earnings').textContent(), '10 credits ($0.10)');
    assert.equal(await totalOf(page, 'Calls'), n(summary.body.totals.calls));
    assert.equal(await totalOf(page, 'Callers'), String(summary.body.callers));
    assert.equal(summary.body.totals.calls, OWN_CALLS + 3);

    const byCaller = await rowsOf(page.getByTestId('author-by-caller'));
    assert.deepEqual(
      byCaller.map((r) => r.slice(0, 4)),
      [
        [seller.accountId, String(OWN_CALLS), String(OWN_CALLS - 1), '1'],
        [buyer.accountId, '3', '2', '1'],
      ],
    );
    const byAgent = await rowsOf(page.getByTestId('author-by-agent'));
    assert.deepEqual(
      byAgent.map((r) => r.slice(0, 2)),
      [
        ['seller/greet', String(OWN_CALLS)],
        ['seller/oracle', '3'],
      ],
    );
    const byTenant = await rowsOf(page.getByTestId('author-by-tenant'));
    assert.deepEqual(
      byTenant.map((r) => r.slice(0, 2)),
      [
        ['(none)', String(OWN_CALLS - 2 + 2)],
        ['customer-42', '2'],
        ['shop-7', '1'],
      ],
    );
    // The newest records are the buyer's, by account id, with what they paid.
    const records = await rowsOf(page.getByTestId('call-records'));
    assert.equal(records.length, 50);
    assert.deepEqual(
      records.slice(0, 3).map((r) => [r[1], r[2], r[4], r[5], r[8]]),
      [
        ['seller/oracle@v1', buyer.accountId, 'error', 'LLM_ERROR', '0'],
        ['seller/oracle@v1', buyer.accountId, 'success', '—', '5'],
        ['seller/oracle@v1', buyer.accountId, 'success', '—', '5'],
      ],
    );
    assert.ok(!(await page.content()).includes(buyer.key));
    await page.context().close();
  });

  it('shows the API’s error for a range it refuses, then a chosen range', async () => {
    const page = await usagePage(seller.key, '#/usage');
    await page.getByTestId('usage-totals').waitFor();
    const refused = errorOf(await p.request('GET', '/usage?from=2000-01-01', { key: seller.key }));
    await page.getByLabel('From (UTC)').fill('2000-01-01');
    await page.getByLabel('From (UTC)').press('Enter');
    const alert = page.getByRole('alert').first();
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.match(text, /INVALID_INPUT/);
    assert.ok(text.includes(refused.message), text);

    // Yesterday only: no calls, every section says so.
    const yesterday = dayBefore(1);
    await page.getByLabel('From (UTC)').fill(yesterday);
    await page.getByLabel('To (UTC)').fill(yesterday);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No calls in this range.').first().waitFor();
    await waitFor('one day of calls', async () =>
      (await page.getByTestId('calls-by-day').locator('tbody tr').count()) === 1 ? true : undefined,
    );
    await waitFor('zero calls in the totals', async () =>
      (await totalOf(page, 'Calls')) === '0' ? true : undefined,
    );
    await page.context().close();
  });

  it('fits a phone’s width in dark mode', async () => {
    for (const hash of ['#/usage', '#/usage/author']) {
      const page = await usagePage(seller.key, hash, {
        viewport: { width: 375, height: 740 },
        colorScheme: 'dark',
      });
      await page.getByTestId('call-records').waitFor();
      const layout = (await page.evaluate(`({
        scrollWidth: document.documentElement.scrollWidth,
        width: window.innerWidth,
        background: getComputedStyle(document.body).backgroundColor,
      })`)) as { scrollWidth: number; width: number; background: string };
      assert.ok(layout.scrollWidth <= layout.width, `${hash}: ${layout.scrollWidth} > ${layout.width}`);
      assert.equal(layout.background, 'rgb(21, 23, 28)');
      await page.context().close();
    }
  });
});
