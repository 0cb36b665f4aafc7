import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';

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

interface Asset {
  type: string;
  cacheControl: string;
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
 * in AWS the same files go to a static host, not to a Lambda (docs/dashboard.md).
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
      // Vite names everything under assets/ by its content hash: a new build is a new name, so a
      // browser may keep these forever. Anything else (index.html) is checked on every load.
      const hashed = urlPath.startsWith('/assets/');
      this.assets.set(urlPath, {
        type: TYPES[ext] ?? 'application/octet-stream',
        cacheControl: hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
        identity,
        compressible: COMPRESSIBLE.has(ext) && identity.length > 256,
      });
    }
    const index = this.assets.get('/index.html');
    if (index) this.assets.set('/', index);
  }

  /** Answers a GET or HEAD of a dashboard file; false when `pathname` is not one (the caller goes on). */
  serve(req: IncomingMessage, res: ServerResponse, method: string, pathname: string): boolean {
    if (method !== 'GET' && method !== 'HEAD') return false;
    const asset = this.assets.get(pathname);
    if (!asset) return false;
    const accepted = String(req.headers['accept-encoding'] ?? '');
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
    res.statusCode = 200;
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', asset.cacheControl);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (asset.compressible) res.setHeader('Vary', 'Accept-Encoding');
    if (encoding) res.setHeader('Content-Encoding', encoding);
    if (asset.type.startsWith('text/html')) {
      res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('X-Frame-Options', 'DENY');
    }
    res.setHeader('Content-Length', body.length);
    res.end(method === 'HEAD' ? undefined : body);
    return true;
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
