/**
 * Screenshots of every dashboard page, written to docs/dashboard/ (the README shows them):
 * `npm run dashboard:screenshots`.
 *
 * It starts what the browser tests start (test/helpers/dashboard.ts: a fresh build of web/, the
 * local platform on a temporary SQLite store, a fake model on loopback, headless Chromium), makes
 * a small workspace's worth of data through the API, then opens each page the navigation links
 * to, in order, and screenshots it at a laptop's size in the light scheme; the overview also at a
 * phone's width in the dark scheme. The pages are found from the navigation, so a new page gets
 * its screenshot without a change here.
 */
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startDashboard } from '../test/helpers/dashboard.ts';
import { seedDashboardDemo } from './dashboard-demo-data.ts';

const OUT = fileURLToPath(new URL('../docs/dashboard/', import.meta.url));
const LAPTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

/**
 * Every query settled: nothing on the page says "Loading" any more. (Polled from here: the page's
 * policy forbids evaluating strings in it.)
 */
async function settled(page: Page): Promise<void> {
  const until = Date.now() + 15_000;
  while ((await page.getByText(/Loading/).count()) > 0) {
    if (Date.now() > until) throw new Error(`${page.url()} still loading after 15 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const harness = await startDashboard();
try {
  const demo = await seedDashboardDemo(harness);
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const page = await harness.signedIn(demo.key, undefined, { viewport: LAPTOP, colorScheme: 'light' });
  const links = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').all();
  const pages: { title: string; href: string }[] = [];
  for (const link of links) {
    pages.push({
      title: ((await link.textContent()) ?? '').trim(),
      href: (await link.getAttribute('href')) ?? '',
    });
  }
  for (const { title, href } of pages) {
    await page.goto(`${harness.p.url}/${href}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await settled(page);
    const file = `${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.png`;
    await page.screenshot({ path: `${OUT}${file}`, fullPage: true });
    process.stdout.write(`docs/dashboard/${file}\n`);
  }
  const phone = await harness.signedIn(demo.key, undefined, { viewport: PHONE, colorScheme: 'dark' });
  await settled(phone);
  await phone.screenshot({ path: `${OUT}overview-phone-dark.png`, fullPage: true });
  process.stdout.write('docs/dashboard/overview-phone-dark.png\n');
} finally {
  await harness.close();
}
