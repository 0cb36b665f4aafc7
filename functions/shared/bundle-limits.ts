/*
 * Code-bundle limits and accepted content types, without the archive libraries, so the route
 * table (imported by every handler) can name them cheaply. The reasons are in bundle-archive/inspect.ts.
 */

export interface BundleLimits {
  /** Bytes of the archive itself. */
  maxArchiveBytes: number;
  /** Entries of every kind (files, directories, links). */
  maxEntries: number;
  /** Sum of the sizes of the regular files once extracted. */
  maxUncompressedBytes: number;
}

export const BUNDLE_LIMITS: Readonly<BundleLimits> = Object.freeze({
  maxArchiveBytes: 25 * 1024 * 1024,
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
