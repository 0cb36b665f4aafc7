import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { buildDashboard } from '../../scripts/build-web.ts';
import { type FakeLlmProviders, start as startFakeLlm } from './fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';

/**
 * Debian's Chromium headless shell (package chromium-headless-shell; `.ci/run` and `npm test`'s
 * pretest install it): the same Blink and V8 as the browser, in the headless mode Playwright itself
 * uses for headless runs, without the whole browser's own UI and services, which the dashboard's
 * tests would spend much of their time on with the full browser (`chromium --headless`) on two
 * cores.
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

export interface DashboardHarness {
  p: TestPlatform;
  fake: FakeLlmProviders;
  browser: Browser;
  /** The build of web/ the platform serves (the process's). */
  buildDir: string;
  /** A fresh browser context (no storage shared with other tests) on the dashboard. */
  open: (options?: BrowserContextOptions) => Promise<Page>;
  /** A fresh context, signed in with `key`, on the page at `hash` (`#/agents`) once it shows. */
  signedIn: (key: string, hash?: string, options?: BrowserContextOptions) => Promise<Page>;
  close: () => Promise<void>;
}

/** Fills the sign-in form as a user would. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * One build of web/ and one Chromium a process. The dashboard's files share a process
 * (test/setup/shared-processes.ts), and each of them built the dashboard (about 0.8 CPU-s) and
 * launched a browser of its own (about a CPU-second with its helper processes). The build is made
 * at the first harness, so the source as it is is tested, and removed when the process exits.
 */
let build: Promise<string> | undefined;
function sharedBuild(): Promise<string> {
  build ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-dashboard-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    // As the local server's own build (npm's `prepare`): with its compressed forms beside each file.
    await buildDashboard(dir, { precompress: true });
    return dir;
  })().catch((err: unknown) => {
    // A failed build fails its file; the next file tries again.
    build = undefined;
    throw err;
  });
  return build;
}

/**
 * The browser, held by the harnesses open: a harness closes every context when it closes, so a
 * file meets no page or storage of another, and the browser closes a second after the last
 * harness unless the next file's harness takes it first (a group's files start one after another).
 */
let browser: Promise<Browser> | undefined;
let holders = 0;
let closing: NodeJS.Timeout | undefined;
/** Launches the browser as `browser`, forgotten if its launch fails. */
function launchBrowser(): Promise<Browser> {
  const launching = chromium.launch({
    executablePath: CHROMIUM,
    // Chromium's own sandbox needs user namespaces it may not get as root in a container; the
    // page is ours, served from loopback.
    args: ['--no-sandbox'],
  });
  browser = launching;
  launching.catch(() => {
    if (browser === launching) browser = undefined;
  });
  return launching;
}
async function holdBrowser(): Promise<Browser> {
  clearTimeout(closing);
  // Taken or launched before any await, so that two harnesses opening at once share one launch.
  const current = browser ?? launchBrowser();
  let held = await current;
  // One that crashed or was closed is launched again (once, by whoever finds it first), so that
  // a file's failure stays its own.
  if (!held.isConnected())
    held = await (browser === current ? launchBrowser() : (browser ?? launchBrowser()));
  holders++;
  return held;
}
async function releaseBrowser(held: Browser): Promise<void> {
  holders--;
  try {
    await Promise.all(held.contexts().map((c) => c.close()));
  } finally {
    if (holders === 0) {
      closing = setTimeout(() => {
        browser = undefined;
        void held.close();
      }, 1000);
    }
  }
}

/**
 * The dashboard as the tests drive it: the process's build of web/ (above), the local platform
 * serving it with its OpenAI provider pointed at the fake model, and headless Chromium. Its clock
 * is set to now, so the browser's day and the platform's agree. Everything stays on loopback.
 */
export async function startDashboard(
  /** More of the platform's environment; a function of the fake model for its other vendors' URLs. */
  env: Record<string, string> | ((fake: FakeLlmProviders) => Record<string, string>) = {},
): Promise<DashboardHarness> {
  // Taken first, within the second the last file's browser waits for the next.
  const browser = await holdBrowser();
  let fake: FakeLlmProviders | undefined;
  let p: TestPlatform;
  let buildDir: string;
  try {
    buildDir = await sharedBuild();
    fake = await startFakeLlm();
    const fakeLlm = fake;
    p = await startTestPlatform(
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: fakeLlm.baseUrls.openai,
        ...(typeof env === 'function' ? env(fakeLlm) : env),
      },
      'sqlite',
      {},
      { dashboardDir: buildDir },
    );
  } catch (err) {
    // Given back, so that the process can still end when its files are done.
    await releaseBrowser(browser);
    await fake?.close();
    throw err;
  }
  p.clock.set(new Date());
  const fakeLlm = fake;
  const open = async (options?: BrowserContextOptions) => {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await page.goto(`${p.url}/`);
    return page;
  };
  return {
    p,
    fake,
    browser,
    buildDir,
    open,
    signedIn: async (key, hash, options) => {
      const page = await open(options);
      await signIn(page, key);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      if (hash) await page.goto(`${p.url}/${hash}`);
      return page;
    },
    close: async () => {
      try {
        await releaseBrowser(browser);
      } finally {
        await p.close();
        await fakeLlm.close();
      }
    },
  };
}
