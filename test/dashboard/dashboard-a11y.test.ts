import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { seedDashboardDemo } from '../../scripts/dashboard-demo-data.ts';
import { type DashboardHarness, startDashboard } from '../helpers/dashboard.ts';

/** WCAG 2.1 A and AA: what "keyboard accessible, light and dark" is measured against. */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Every page of the dashboard, checked by axe-core (Deque's accessibility engine) in Chromium, in
 * the light and the dark scheme, on the screenshots' demo data: names of controls, labels,
 * headings, landmarks, colour contrast, ARIA use. Pages are found from the navigation, so a new
 * page is checked without a change here. Each scheme's pass runs axe on a dozen pages in Chromium,
 * 45 s on a quiet 2-core machine and over two minutes on a loaded one: hence 300 s, as the other
 * browser files have.
 */
describe('dashboard: every page passes axe’s WCAG 2.1 AA checks, light and dark', {
  timeout: 300_000,
}, () => {
  let harness: DashboardHarness;
  let key: string;
  let pages: { title: string; href: string }[] = [];

  before(async () => {
    harness = await startDashboard();
    ({ key } = await seedDashboardDemo(harness));
    const page = await harness.signedIn(key);
    for (const link of await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').all()) {
      pages.push({
        title: ((await link.textContent()) ?? '').trim(),
        href: (await link.getAttribute('href')) ?? '',
      });
    }
    await page.context().close();
    pages = pages.filter((p) => p.href.startsWith('#/'));
  });

  after(async () => {
    await harness?.close();
  });

  /** Waits for the page's queries to settle: nothing says "Loading" any more. */
  const settled = async (page: Page) => {
    const until = Date.now() + 15_000;
    while ((await page.getByText(/Loading/).count()) > 0) {
      assert.ok(Date.now() < until, `${page.url()} still loading`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  for (const colorScheme of ['light', 'dark'] as const) {
    // The runner's default of 120 s is per test: this one test walks every page, so it takes the
    // describe's 300 s as its own.
    it(`has no violations in the ${colorScheme} scheme, on the sign-in page and every page`, {
      timeout: 300_000,
    }, async () => {
      assert.ok(pages.length >= 11, `pages: ${pages.map((p) => p.title)}`);
      // axe is injected as a script: the page's policy (script-src 'self') would refuse it.
      const context = await harness.browser.newContext({ colorScheme, bypassCSP: true });
      const page = await context.newPage();
      const found: string[] = [];
      const check = async (where: string) => {
        const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
        for (const v of results.violations) {
          found.push(
            `${where}: ${v.id} (${v.impact}): ${v.help}\n${v.nodes
              .slice(0, 5)
              .map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replaceAll('\n', ' ')}`)
              .join('\n')}`,
          );
        }
      };
      await page.goto(`${harness.p.url}/`);
      await page.getByLabel('API key').waitFor();
      await check('sign-in');
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      for (const { title, href } of pages) {
        await page.goto(`${harness.p.url}/${href}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await settled(page);
        await check(title);
      }
      await context.close();
      assert.deepEqual(found, [], found.join('\n'));
    });
  }
});
