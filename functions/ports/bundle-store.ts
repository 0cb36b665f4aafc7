import { createHash } from 'node:crypto';

/**
 * The BundleStore port: where agent code bundles live. One immutable blob per agent version,
 * validated (functions/shared/bundle-archive/inspect.ts) before it is stored. Runners never read
 * the store directly: they fetch `downloadUrl`, a presigned GET URL in AWS, a file:// URL locally.
 * It also holds the payloads too large for a record or an answer, under `bundles/payloads/`
 * (core/payloads/): a client fetches those through `shareUrl`.
 */
export type BundleFormat = 'tar.gz' | 'zip';

export interface BundleMeta {
  contentType: string;
  /** SHA-256 of the bytes, lowercase hex (what inspectBundle returns). Adapters verify it. */
  sha256: string;
}

export interface BundleStore {
  /**
   * Stores (or replaces) the bytes at a key. Rejects with BundleIntegrityError when `meta.sha256`
   * is not the digest of `data`, and stores nothing.
   */
  put(key: string, data: Buffer, meta: BundleMeta): Promise<void>;
  /** The bytes at a key, or undefined when there are none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Deletes the bytes at a key; deleting one that does not exist is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A URL a runner can GET the bundle from, valid for `ttlSeconds` (1 second to 7 days, the most
   * S3 presigning allows). Whether the key exists is not checked: fetching a missing one fails.
   */
  downloadUrl(key: string, ttlSeconds: number): Promise<string>;
  /**
   * A URL any HTTP client holding it can GET the bytes from, valid for `ttlSeconds` (as
   * downloadUrl): in AWS the same presigned S3 GET URL; locally a signed URL of the platform's own
   * server (`/downloads/…`, adapters/local/signed-downloads.ts). Both answer 403 once it expires.
   */
  shareUrl(key: string, ttlSeconds: number): Promise<string>;
}

/** Every bundle key starts with this; the local store keeps bundles under `<dataDir>/bundles/`. */
export const BUNDLE_KEY_PREFIX = 'bundles/';

/** Longest presigned URL lifetime S3 accepts (SigV4): 7 days. */
export const MAX_DOWNLOAD_URL_TTL_SECONDS = 7 * 24 * 60 * 60;

const MAX_KEY_LENGTH = 1024;
/**
 * Slug-shaped: org slugs, agent names (manifest.ts AGENT_NAME_PATTERN) and ids (UUIDs) all fit;
 * nothing else reaches a key.
 */
const KEY_PART = /^[a-z0-9][a-z0-9-]{0,63}$/;
const VERSION = /^v[1-9][0-9]{0,8}$/;
/** What a key segment may hold; '.' and '..' are refused separately. */
const KEY_SEGMENT = /^[A-Za-z0-9._-]+$/;

/** A key that is not a safe, relative, `bundles/`-prefixed path. A programming error, not input. */
export class InvalidBundleKeyError extends Error {
  override name = 'InvalidBundleKeyError';
}

/** The bytes given to `put` do not match the declared SHA-256. */
export class BundleIntegrityError extends Error {
  override name = 'BundleIntegrityError';
}

/**
 * The key of an agent version's bundle: `bundles/<org>/<agent>/<version>.tar.gz|.zip`. The
 * extension tells a runner how to unpack what it downloads. `org` and `agent` must already be
 * slug-shaped (validated slugs or ids), `version` is `v<number>`; anything else throws, so no
 * unvalidated user text can reach a key.
 */
export function bundleKey(org: string, agent: string, version: string, format: BundleFormat): string {
  for (const [what, value] of [
    ['org', org],
    ['agent', agent],
  ] as const) {
    if (!KEY_PART.test(value)) {
      throw new InvalidBundleKeyError(`bundle key ${what} must be a slug ([a-z0-9-], 1 to 64 characters)`);
    }
  }
  if (!VERSION.test(version)) throw new InvalidBundleKeyError('bundle key version must be v<number>');
  if (format !== 'tar.gz' && format !== 'zip') {
    throw new InvalidBundleKeyError('bundle key format must be tar.gz or zip');
  }
  return `${BUNDLE_KEY_PREFIX}${org}/${agent}/${version}.${format}`;
}

/**
 * Whether `key` is shaped as an agent version's bundle key (bundleKey's `bundles/<org>/<agent>/
 * <version>.tar.gz|.zip`), never a payload's (`bundles/payloads/…/<id>.json`): what the ECS
 * sandbox may hand a run's task a GET URL to.
 */
export function isAgentBundleKey(key: string): boolean {
  const m = /^bundles\/([^/]+)\/([^/]+)\/([^/]+)\.(tar\.gz|zip)$/.exec(key);
  return (
    m !== null &&
    KEY_PART.test(m[1] as string) &&
    KEY_PART.test(m[2] as string) &&
    VERSION.test(m[3] as string)
  );
}

/**
 * Throws InvalidBundleKeyError unless the key is `bundles/` followed by non-empty segments of
 * [A-Za-z0-9._-], none of them '.' or '..': never absolute, never escaping, no empty segments.
 * Every adapter checks every key it is handed with this.
 */
export function assertBundleKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidBundleKeyError('bundle key is empty');
  if (key.length > MAX_KEY_LENGTH) throw new InvalidBundleKeyError('bundle key is too long');
  if (!key.startsWith(BUNDLE_KEY_PREFIX)) {
    throw new InvalidBundleKeyError(`bundle key must start with ${BUNDLE_KEY_PREFIX}`);
  }
  const segments = key.split('/');
  if (segments.length < 2) throw new InvalidBundleKeyError('bundle key names no object');
  for (const segment of segments) {
    if (segment === '') throw new InvalidBundleKeyError('bundle key has an empty segment');
    if (segment === '.' || segment === '..') {
      throw new InvalidBundleKeyError('bundle key has a "." or ".." segment');
    }
    if (!KEY_SEGMENT.test(segment)) {
      throw new InvalidBundleKeyError('bundle key segments may hold only [A-Za-z0-9._-]');
    }
  }
}

/** Throws RangeError unless the TTL is a whole number of seconds from 1 to 7 days. */
export function assertDownloadUrlTtl(ttlSeconds: number): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_DOWNLOAD_URL_TTL_SECONDS) {
    throw new RangeError(
      `download URL lifetime must be a whole number of seconds from 1 to ${MAX_DOWNLOAD_URL_TTL_SECONDS} (7 days)`,
    );
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Throws BundleIntegrityError unless `sha256` is lowercase hex and the digest of `data`. */
export function assertSha256(data: Buffer, sha256: string): void {
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) {
    throw new BundleIntegrityError('sha256 must be 64 lowercase hex digits');
  }
  if (createHash('sha256').update(data).digest('hex') !== sha256) {
    throw new BundleIntegrityError('bundle bytes do not match the declared sha256');
  }
}
