import { extname } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, gzip, gzipSync, constants as zlib } from 'node:zlib';

/**
 * The compressed forms the local server offers a dashboard file in, best first, and how they are
 * made: brotli at its highest quality and gzip at its highest level, since each file is compressed
 * once and served many times. The build makes them (scripts/build-web.ts) and keeps each beside
 * its file as `<file>.br` and `<file>.gz`: at quality 11 the main script takes about half a CPU
 * second to compress, which a server making it on the first request spends on its one thread while
 * every call waits. A build without them (one copied by hand) still gets them, made on first use.
 */
export const DASHBOARD_ENCODINGS = ['br', 'gzip'] as const;
export type DashboardEncoding = (typeof DASHBOARD_ENCODINGS)[number];

/** The name of a form kept beside its file. */
export const PRECOMPRESSED_SUFFIX: Readonly<Record<DashboardEncoding, string>> = { br: '.br', gzip: '.gz' };

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** Text worth compressing: images and fonts are compressed already, and a few bytes gain nothing. */
export function isCompressible(file: string, size: number): boolean {
  return COMPRESSIBLE.has(extname(file)) && size > 256;
}

const brotliOptions = (body: Uint8Array) => ({
  params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
});
const GZIP_OPTIONS = { level: 9 };

export function compressSync(body: Uint8Array, encoding: DashboardEncoding): Buffer {
  return encoding === 'br' ? brotliCompressSync(body, brotliOptions(body)) : gzipSync(body, GZIP_OPTIONS);
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The same, on libuv's thread pool: the build compresses its files side by side. */
export function compress(body: Uint8Array, encoding: DashboardEncoding): Promise<Buffer> {
  return encoding === 'br' ? brotliAsync(body, brotliOptions(body)) : gzipAsync(body, GZIP_OPTIONS);
}
