import { createHash } from 'node:crypto';
import { BUNDLE_LIMITS, type BundleLimits } from '../bundle-limits.ts';
import { EntryChecker } from './entry-checker.ts';
import { type BundleArchiveFormat, detectFormat } from './format.ts';
import { describeBytes, Refusal, type RefusalCode } from './refusal.ts';
import { walk } from './walk.ts';

/**
 * Code bundles (functions/shared/bundle-archive/): this file inspects one; extract.ts extracts one.
 *
 * Validation of an uploaded code bundle before it is stored, and safe extraction of a validated
 * one. Bundles are `.tar.gz` or `.zip`; the rules are the same for both:
 *
 * - every entry path is relative and stays inside the root: no leading '/', no Windows drive
 *   ('C:'), no backslash, no NUL, no '..' segment ('.' and empty segments are harmless and
 *   normalised away);
 * - symbolic links are relative and resolve inside the root from the link's directory, following
 *   any other link of the archive they pass through (pnpm-style node_modules work);
 * - hard links (tar only) name an earlier regular file of the archive by its archive path (tar's
 *   convention: relative to the root, not to the link), with no '..';
 * - no devices, FIFOs, sockets or unknown entry types; no entry below a file or link of the
 *   archive; no path twice (directories excepted), so extraction never writes through a link;
 * - at least one regular file.
 *
 * Limits against archive bombs: 4,669,440 bytes on the wire (the largest binary body AWS carries to a
 * function, on both deployments: shared/byte-limits.ts),
 * 10,000 entries (a project with vendored dependencies fits; a zip's count is checked before its
 * first entry), 200 MB in total across regular files (8x the upload limit: what extraction may
 * write to disk; checked from each entry's header before its data is read). The decompressed tar
 * stream (headers and padding included) is cut off at that plus 4 KiB per allowed entry plus
 * 64 KiB, so zeros after the archive cannot make us inflate gigabytes. Uncompressed tar, zstd and
 * brotli are not accepted.
 */

export type BundleInspection =
  | { ok: true; format: BundleArchiveFormat; entries: number; uncompressedBytes: number; sha256: string }
  | { ok: false; code: RefusalCode; message: string };

/** Checks an uploaded bundle; never throws. */
export async function inspectBundle(
  data: Buffer,
  declaredContentType: string | undefined,
  limits: Partial<BundleLimits> = {},
): Promise<BundleInspection> {
  const lim: BundleLimits = { ...BUNDLE_LIMITS, ...limits };
  try {
    if (data.length === 0) return { ok: false, code: 'INVALID_INPUT', message: 'The code bundle is empty.' };
    if (data.length > lim.maxArchiveBytes) {
      return {
        ok: false,
        code: 'DOCUMENT_TOO_LARGE',
        message: `The code bundle is ${data.length} bytes; the limit is ${describeBytes(lim.maxArchiveBytes)}.`,
      };
    }
    const format = detectFormat(data, declaredContentType);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const checker = new EntryChecker(lim);
    await walk(data, format, lim, checker, undefined);
    checker.finish();
    return {
      ok: true,
      format,
      entries: checker.entries,
      uncompressedBytes: checker.uncompressedBytes,
      sha256,
    };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, code: err.code, message: err.message };
    return {
      ok: false,
      code: 'UNPROCESSABLE',
      message: `The code bundle could not be read: ${(err as Error)?.message ?? String(err)}`,
    };
  }
}
