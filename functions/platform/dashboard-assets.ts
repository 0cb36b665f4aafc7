import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
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
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

interface Asset {
  type: string;
  /** Cache-Control and the security headers (dashboard-headers.ts). */
  headers: Readonly<Record<string, string>>;
  identity: Buffer;
  compressible: boolean;
  /** Made on the first request that accepts them, then kept: most platforms (tests) never serve one. */
  gzip?: Buffer;
  br?: Buffer;
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
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = join(entry.parentPath, entry.name);
      const urlPath = `/${relative(dir, file).split(sep).join('/')}`;
      const ext = extname(file);
      const identity = readFileSync(file);
      this.assets.set(urlPath, {
        type: TYPES[ext] ?? 'application/octet-stream',
        headers: DASHBOARD_HEADERS[dashboardFileKind(urlPath)],
        identity,
        compressible: COMPRESSIBLE.has(ext) && identity.length > 256,
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
    let encoding: string | undefined;
    if (asset.compressible && acceptsEncoding(accepted, 'br')) {
      asset.br ??= brotliCompressSync(asset.identity, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: asset.identity.length },
      });
      [body, encoding] = [asset.br, 'br'];
    } else if (asset.compressible && acceptsEncoding(accepted, 'gzip')) {
      asset.gzip ??= gzipSync(asset.identity, { level: 9 });
      [body, encoding] = [asset.gzip, 'gzip'];
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
