/**
 * Builds the dashboard (web/) with Vite into web/dist, which the local server serves at `/`.
 *
 * package.json runs it as `prepare`, which npm runs after `npm install` and `npm ci` in this
 * checkout (not when the package is installed elsewhere). So the README's two commands still
 * suffice on a fresh clone, CI's `npm ci` included, with no build step to remember; and web/dist
 * stays out of git (a committed build would drift from its source). Vite and Preact are
 * devDependencies, present whenever prepare runs. `npm run build:web` rebuilds after a change.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { DEFAULT_DASHBOARD_DIR } from '../functions/platform/dashboard-assets.ts';
import {
  compress,
  DASHBOARD_ENCODINGS,
  isCompressible,
  PRECOMPRESSED_SUFFIX,
} from '../functions/platform/dashboard-compression.ts';

export const WEB_ROOT = fileURLToPath(new URL('../web', import.meta.url));

/**
 * Builds into `outDir` (default web/dist); tests build into a directory of their own.
 * `precompress`: keeps each text file's brotli and gzip forms beside it (`<file>.br`, `<file>.gz`)
 * for the local server to serve as they are (functions/platform/dashboard-compression.ts). The
 * build the CDK deploys has none: CloudFront compresses what S3 holds.
 */
export async function buildDashboard(
  outDir?: string,
  options: { precompress?: boolean } = {},
): Promise<void> {
  await build({
    configFile: `${WEB_ROOT}/vite.config.ts`,
    logLevel: 'warn',
    ...(outDir ? { build: { outDir, emptyOutDir: true } } : {}),
  });
  if (options.precompress) await precompress(outDir ?? DEFAULT_DASHBOARD_DIR);
}

async function precompress(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const forms = entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map(async (file) => {
      const body = await readFile(file);
      if (!isCompressible(file, body.length)) return;
      await Promise.all(
        DASHBOARD_ENCODINGS.map(async (encoding) =>
          writeFile(`${file}${PRECOMPRESSED_SUFFIX[encoding]}`, await compress(body, encoding)),
        ),
      );
    });
  await Promise.all(forms);
}

// `node scripts/build-web.ts [outDir]`: without outDir (npm's `prepare`, `npm run build:web`), the
// local server's build, precompressed; the CDK app passes the asset directory it stages
// (lib/constructs/dashboard-site.ts), so every synthesis deploys the source as it is.
if (import.meta.main) {
  const outDir = process.argv[2];
  await buildDashboard(outDir, { precompress: outDir === undefined });
  process.stdout.write(`dashboard built into ${outDir ?? 'web/dist'}\n`);
}
