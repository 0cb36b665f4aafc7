/**
 * Builds the dashboard (web/) with Vite into web/dist, which the local server serves at `/`.
 *
 * package.json runs it as `prepare`, which npm runs after `npm install` and `npm ci` in this
 * checkout (not when the package is installed elsewhere). So the README's two commands still
 * suffice on a fresh clone, CI's `npm ci` included, with no build step to remember; and web/dist
 * stays out of git (a committed build would drift from its source). Vite and Preact are
 * devDependencies, present whenever prepare runs. `npm run build:web` rebuilds after a change.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export const WEB_ROOT = fileURLToPath(new URL('../web', import.meta.url));

/** Builds into `outDir` (default web/dist); tests build into a directory of their own. */
export async function buildDashboard(outDir?: string): Promise<void> {
  await build({
    configFile: `${WEB_ROOT}/vite.config.ts`,
    logLevel: 'warn',
    ...(outDir ? { build: { outDir, emptyOutDir: true } } : {}),
  });
}

// `node scripts/build-web.ts [outDir]`: the CDK app passes the asset directory it stages
// (lib/constructs/dashboard-site.ts), so every synthesis deploys the source as it is.
if (import.meta.main) {
  const outDir = process.argv[2];
  await buildDashboard(outDir);
  process.stdout.write(`dashboard built into ${outDir ?? 'web/dist'}\n`);
}
