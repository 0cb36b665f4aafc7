import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compressSync,
  DASHBOARD_ENCODINGS,
  type DashboardEncoding,
  isCompressible,
  PRECOMPRESSED_SUFFIX,
} from './dashboard-compression.ts';
import { DASHBOARD_HEADERS, dashboardFileKind } from './dashboard-headers.ts';

/** Where `npm install` (the `prepare` script, scripts/build-web.ts) writes the dashboard's build. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../web/dist', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
interface Asset {
  type: string;
  /** Cache-Control and the security headers (dashboard-headers.ts). */
  headers: Readonly<Record<string, string>>;
  identity: Buffer;
  compressible: boolean;
  /**
   * The compressed forms: the build's (`<file>.br`, `<file>.gz`: dashboard-compression.ts), or made
   * on the first request that accepts one and then kept, when the build has none.
   */
  forms: Partial<Record<DashboardEncoding, Buffer>>;
}

/**
 * The built dashboard (web/dist), held in memory with its gzip and brotli forms, served by the
 * local server at `/` and `/assets/*` for the requests no API route takes (the API keeps priority:
 * see LocalServer). Route-less on purpose: the route table describes the API (and /openapi.json);
 * in AWS the same files go to S3 behind CloudFront, not to a Lambda (lib/constructs/dashboard-site.ts).
 */
export class DashboardAssets {
  private readonly assets = new Map<string, Asset>();

  /** The build in `dir`, or undefined when there is none (the platform then serves the API only). */
  static load(dir: string = DEFAULT_DASHBOARD_DIR): DashboardAssets | undefined {
    if (!existsSync(join(dir, 'index.html'))) return undefined;
    return new DashboardAssets(dir);
  }

  private constructor(dir: string) {
    const files = new Set(
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name)),
    );
    const isFormOfAnother = (file: string) =>
      DASHBOARD_ENCODINGS.some((encoding) => {
        const suffix = PRECOMPRESSED_SUFFIX[encoding];
        return file.endsWith(suffix) && files.has(file.slice(0, -suffix.length));
      });
    for (const file of files) {
      if (isFormOfAnother(file)) continue;
      const urlPath = `/${relative(dir, file).split(sep).join('/')}`;
      const identity = readFileSync(file);
      const compressible = isCompressible(file, identity.length);
      const forms: Asset['forms'] = {};
      for (const encoding of compressible ? DASHBOARD_ENCODINGS : []) {
        const form = `${file}${PRECOMPRESSED_SUFFIX[encoding]}`;
        // Only a form the build made with this file, not an older one left beside a newer file.
        if (files.has(form) && statSync(form).mtimeMs >= statSync(file).mtimeMs) {
          forms[encoding] = readFileSync(form);
        }
      }
      this.assets.set(urlPath, {
        type: TYPES[extname(file)] ?? 'application/octet-stream',
        headers: DASHBOARD_HEADERS[dashboardFileKind(urlPath)],
        identity,
        compressible,
        forms,
      });
    }
    const index = this.assets.get('/index.html');
    if (index) this.assets.set('/', index);
  }

  /**
   * The answer to a GET or HEAD of a dashboard file, or undefined when `pathname` is not one (the
   * API answers). A HEAD's body is dropped by the Node shell, its length kept.
   */
  answer(request: Request, pathname: string): Response | undefined {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const asset = this.assets.get(pathname);
    if (!asset) return undefined;
    const accepted = request.headers.get('accept-encoding') ?? '';
    let body = asset.identity;
    const encoding = asset.compressible
      ? DASHBOARD_ENCODINGS.find((coding) => acceptsEncoding(accepted, coding))
      : undefined;
    if (encoding) {
      asset.forms[encoding] ??= compressSync(asset.identity, encoding);
      body = asset.forms[encoding];
    }
    const headers: Record<string, string> = { 'Content-Type': asset.type, ...asset.headers };
    if (asset.compressible) headers.Vary = 'Accept-Encoding';
    if (encoding) headers['Content-Encoding'] = encoding;
    return new Response(new Uint8Array(body), { status: 200, headers });
  }
}

/** Whether an Accept-Encoding value takes `coding` (named with a non-zero q, or `*`). */
export function acceptsEncoding(header: string, coding: string): boolean {
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (name.trim() !== coding && name.trim() !== '*') continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return q === undefined || Number(q) > 0;
  }
  return false;
}
