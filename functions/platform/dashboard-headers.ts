/**
 * The response headers of the dashboard's files, wherever they are served: the local server
 * (dashboard-assets.ts) sets them on each response, and in AWS the CDK app turns them into the
 * CloudFront response headers policies of the dashboard's behaviours (lib/constructs/
 * dashboard-site.ts). One table, so the two cannot drift apart.
 */

/**
 * The dashboard page's policy: its own scripts, styles and images only, API calls to this origin
 * only, no frames, no plugins, no inline script. A key typed into the page is the account's
 * credential, so an injected script must have nowhere to run and nowhere to send it.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where Vite writes the files it names by content hash (web/vite.config.ts's default assetsDir). */
export const HASHED_ASSETS_PREFIX = '/assets/';

/**
 * The three kinds of file in a build: the page (HTML), the hashed assets (a new build is a new
 * name, so a browser may keep them forever), and anything else (web/public's files, such as the
 * favicon, kept under their own names, so checked on every load).
 */
export type DashboardFileKind = 'page' | 'hashed' | 'other';

export const DASHBOARD_HEADERS: Readonly<Record<DashboardFileKind, Readonly<Record<string, string>>>> = {
  page: {
    'Cache-Control': 'no-cache',
    'Content-Security-Policy': DASHBOARD_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  },
  hashed: {
    'Cache-Control': 'public, max-age=31536000, immutable',
    'X-Content-Type-Options': 'nosniff',
  },
  other: {
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  },
};

/** The kind of the file served at `urlPath` (`/index.html`, `/assets/index-3f2a.js`, `/favicon.svg`). */
export function dashboardFileKind(urlPath: string): DashboardFileKind {
  if (urlPath.startsWith(HASHED_ASSETS_PREFIX)) return 'hashed';
  if (urlPath === '/' || urlPath.endsWith('.html')) return 'page';
  return 'other';
}
