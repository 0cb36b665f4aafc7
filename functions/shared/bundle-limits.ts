/*
 * Code-bundle limits and accepted content types, without the archive libraries, so the route
 * table (imported by every handler) can name them cheaply. The reasons are in bundle-archive/inspect.ts.
 */

import { MAX_BINARY_BODY_BYTES } from './byte-limits.ts';

export interface BundleLimits {
  /** Bytes of the archive itself. */
  maxArchiveBytes: number;
  /** Entries of every kind (files, directories, links). */
  maxEntries: number;
  /** Sum of the sizes of the regular files once extracted. */
  maxUncompressedBytes: number;
}

export const BUNDLE_LIMITS: Readonly<BundleLimits> = Object.freeze({
  // The largest binary body AWS carries to a function (4,669,440 bytes), on both deployments.
  maxArchiveBytes: MAX_BINARY_BODY_BYTES,
  maxEntries: 10_000,
  maxUncompressedBytes: 200 * 1024 * 1024,
});

/**
 * Content types an upload may declare. `application/octet-stream` (what generic clients send) and
 * no Content-Type at all leave the decision to the magic bytes; a specific archive type must
 * match them, so a zip declared as gzip (or the reverse) is refused rather than guessed at.
 */
export const GZIP_CONTENT_TYPES: readonly string[] = [
  'application/gzip',
  'application/x-gzip',
  'application/x-compressed-tar',
  'application/x-tar+gzip',
  'application/tar+gzip',
];
export const ZIP_CONTENT_TYPES: readonly string[] = ['application/zip', 'application/x-zip-compressed'];
export const GENERIC_CONTENT_TYPES: readonly string[] = ['application/octet-stream'];
