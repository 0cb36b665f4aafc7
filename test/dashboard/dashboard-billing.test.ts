import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { type DashboardHarness, signIn, startDashboard } from '../helpers/dashboard.ts';
import { errorOf, type TestPlatform } from '../helpers/platform.ts';

type Account = { key: string; accountId: string; workspaceId: string };
type Transactions = { transactions: { type: string; amount: number; reference: string }[]; total: number };

/**
 * The Billing page in Chromium with the platform's local payments (the default on one machine):
 * the balance, a top-up that goes to the checkout page, is confirmed there and comes back to the
 * dashboard with the credits landed, a cancelled checkout, the API's error for a refused amount,
 * and the transactions list a page at a time.
 */
describe('dashboard: the Billing page', () => {
  let harness: DashboardHarness;
  let p: TestPlatform;

  const balanceOf = async (who: Account) =>
    (await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key: who.key })).body
      .balance_credits;

  /** Starts a top-up from the page by keyboard: the amount, then Enter. */
  const startTopUp = async (page: Page, credits: string) => {
    const field = page.getByLabel('Credits to buy');
    await field.focus();
    await field.fill(credits);
    await page.keyboard.press('Enter');
  };

  before(async () => {
    harness = await startDashboard();
    ({ p } = harness);
  });

  after(async () => {
    await harness?.close();
  });

  it('tops up through the checkout and back: the balance and the transaction show', async () => {
    const payer = await p.createAccount('payer', 'pro');
    // Opened as localhost while the platform names itself 127.0.0.1 in checkout_url: the tab's
    // session is per origin, so the checkout must open (and come back) on the dashboard's.
    const dashboard = p.url.replace('127.0.0.1', 'localhost');
    const page = await (await harness.browser.newContext()).newPage();
    await page.goto(`${dashboard}/`);
    await signIn(page, payer.key);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${dashboard}/#/billing`);
    const balance = page.getByTestId('balance');
    await balance.waitFor();
    assert.equal(await balance.textContent(), '0 credits ($0.00)');
    await page.getByText('No transactions yet.').waitFor();

    await startTopUp(page, '1200');
    // The platform's own checkout page, on the dashboard's origin.
    await page.waitForURL(/\/billing\/checkout\/lcs_[\w-]+$/);
    assert.ok(page.url().startsWith(`${dashboard}/billing/checkout/`), page.url());
    await page.getByRole('heading', { name: 'Top up 1,200 credits' }).waitFor();
    assert.equal(await balanceOf(payer), 0, 'nothing lands before the payment is confirmed');
    await page.getByRole('button', { name: 'Confirm payment' }).click();
    await page.getByText('This checkout is paid.').waitFor();
    await page.getByRole('link', { name: 'Back to agenthost' }).click();

    // Back in the dashboard, still signed in, on the billing page with the credits landed.
    await page.waitForURL(`${dashboard}/#/billing/paid`);
    await page.getByRole('status').filter({ hasText: 'Back from checkout' }).waitFor();
    assert.equal(await balanceOf(payer), 1200);
    await page.getByText('1,200 credits ($12.00)').waitFor();
    const list = await p.request<Transactions>('GET', '/billing/transactions', { key: payer.key });
    assert.equal(list.body.total, 1);
    const [topup] = list.body.transactions;
    assert.ok(topup);
    const row = page.getByTestId('transactions').locator('tbody tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const cells = (await row.first().locator('td').allTextContents()).map((s) => s.trim());
    assert.deepEqual(cells.slice(1), ['topup', '+1,200', '—', topup.reference]);
    assert.match(topup.reference, /^checkout:lcs_/);
    assert.ok(!(await page.content()).includes(payer.key));
    await page.context().close();
  });

  it('comes back from a cancelled checkout with nothing paid', async () => {
    const payer = await p.createAccount('canceller', 'pro');
    const page = await harness.signedIn(payer.key, '#/billing');
    await page.getByTestId('balance').waitFor();
    await startTopUp(page, '800');
    await page.waitForURL(/\/billing\/checkout\/lcs_[\w-]+$/);
    await page.getByRole('link', { name: 'Cancel and go back to agenthost' }).click();
    await page.waitForURL(/#\/billing\/cancelled$/);
    await page.getByText('Checkout cancelled: nothing was paid.').waitFor();
    assert.equal(await page.getByTestId('balance').textContent(), '0 credits ($0.00)');
    assert.equal(await balanceOf(payer), 0);
    await page.context().close();
  });

  it('shows the API’s error for an amount it refuses, and stays on the page', async () => {
    const payer = await p.createAccount('small', 'pro');
    const refused = errorOf(
      await p.request('POST', '/billing/checkout', { key: payer.key, body: { credits: 10 } }),
    );
    const page = await harness.signedIn(payer.key, '#/billing');
    await page.getByTestId('balance').waitFor();
    await startTopUp(page, '10');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.match(text, /Could not start the checkout: INVALID_INPUT/);
    assert.ok(text.includes(refused.message), text);
    assert.ok(page.url().endsWith('#/billing'));
    await page.context().close();
  });

  it('lists a long ledger a page at a time, and fits a phone in dark mode', async () => {
    const payer = await p.createAccount('regular', 'pro');
    // 27 top-ups: more than one page (25) of the list.
    for (let i = 0; i < 27; i++) {
      // A moment apart on the platform's (fake, standing) clock, so "newest first" is this order.
      p.clock.advance(10);
      const co = await p.request<{ checkout_url: string }>('POST', '/billing/checkout', {
        key: payer.key,
        body: { credits: 500 + i },
      });
      const confirmed = await p.request('POST', `${new URL(co.body.checkout_url).pathname}/confirm`, {
        key: null,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
    }
    const expected = (27 * 500 + (26 * 27) / 2).toLocaleString('en-US');
    const page = await harness.signedIn(payer.key, '#/billing', {
      viewport: { width: 375, height: 740 },
      colorScheme: 'dark',
    });
    await page.getByText(`${expected} credits`).waitFor();
    const rows = page.getByTestId('transactions').locator('tbody tr');
    await page.getByText('25 of 27 shown').waitFor();
    assert.equal(await rows.count(), 25);
    // Newest first, as the API lists them.
    assert.equal((await rows.first().locator('td').nth(2).textContent())?.trim(), '+526');
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('27 of 27 shown').waitFor();
    assert.equal(await rows.count(), 27);
    assert.equal((await rows.last().locator('td').nth(2).textContent())?.trim(), '+500');
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);

    const layout = (await page.evaluate(`({
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
      background: getComputedStyle(document.body).backgroundColor,
    })`)) as { scrollWidth: number; width: number; background: string };
    assert.ok(layout.scrollWidth <= layout.width, `${layout.scrollWidth} > ${layout.width}`);
    assert.equal(layout.background, 'rgb(21, 23, 28)');
    await page.context().close();
  });
});
