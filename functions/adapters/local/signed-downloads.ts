import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

/** The path under which the local server serves shared bundle-store objects. */
export const DOWNLOADS_PATH = '/downloads/';

export type SharedCheck = 'ok' | 'expired' | 'forbidden';

/**
 * The local stand-in for S3's presigned GET URLs: `<server>/downloads/<key>?expires=<epoch s>&
 * signature=<HMAC-SHA256 of key and expiry>`, signed with a random key kept in the data dir (0600,
 * made on first use), so a URL outlives a restart as a presigned URL outlives a Lambda. As S3, the
 * server answers 403 for an expired or altered URL; the expiry is on the platform clock.
 */
export class SignedDownloads {
  private secret: Promise<Buffer> | undefined;
  private readonly keyFile: string;
  private readonly now: () => number;

  constructor(keyFile: string, now: () => number) {
    this.keyFile = keyFile;
    this.now = now;
  }

  /** The signed URL of `key` on `baseUrl`, valid `ttlSeconds` from now. */
  async sign(baseUrl: string, key: string, ttlSeconds: number): Promise<string> {
    const expires = Math.floor(this.now() / 1000) + ttlSeconds;
    const signature = await this.signature(key, expires);
    const path = key.split('/').map(encodeURIComponent).join('/');
    return `${baseUrl.replace(/\/+$/, '')}${DOWNLOADS_PATH}${path}?expires=${expires}&signature=${signature}`;
  }

  /** Whether a URL's expiry and signature let it fetch `key` now (checked before the expiry, as S3). */
  async check(key: string, query: URLSearchParams): Promise<SharedCheck> {
    const expires = Number(query.get('expires'));
    const given = Buffer.from(query.get('signature') ?? '', 'base64url');
    if (!Number.isSafeInteger(expires)) return 'forbidden';
    const expected = Buffer.from(await this.signature(key, expires), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forbidden';
    return Math.floor(this.now() / 1000) >= expires ? 'expired' : 'ok';
  }

  private async signature(key: string, expires: number): Promise<string> {
    this.secret ??= loadOrCreateKey(this.keyFile);
    return createHmac('sha256', await this.secret)
      .update(`${key}\n${expires}`)
      .digest('base64url');
  }
}

async function loadOrCreateKey(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await writeFile(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process of this data dir made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readFile(file);
}
