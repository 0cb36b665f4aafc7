import { randomUUID } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  assertBundleKey,
  assertDownloadUrlTtl,
  assertSha256,
  BUNDLE_KEY_PREFIX,
  type BundleMeta,
  type BundleStore,
  InvalidBundleKeyError,
} from '../../ports/bundle-store.ts';
import { DOWNLOADS_PATH, SignedDownloads } from './signed-downloads.ts';

export interface FileBundleStoreOptions {
  /** The local server's URL (known once it listens), which shareUrl's links point at. */
  serverUrl?: () => string | undefined;
  /** The platform clock (epoch ms), which shared links expire by. Default: the system's. */
  now?: () => number;
}

/** What the local server answers for a shared link (`/downloads/…`). */
export type SharedRead = { status: 200; body: Buffer } | { status: 403 | 404; message: string };

/** The key file of the local server's signed download links, beside the bundles. */
export const DOWNLOADS_KEY_FILE = 'downloads.key';

/**
 * The embedded bundle store: one file per key at `<dataDir>/<key>`, so under `<dataDir>/bundles/`.
 * Directories are 0700 and files 0600 (only the platform's user reads bundles; the sandbox gets a
 * copy). A put writes a temp file in the target's directory, fsyncs it and renames it over the
 * target, so a reader sees the old bytes or the new ones, never half a file. Content type and
 * digest are not kept: the platform records them with the agent version.
 */
export class FileBundleStore implements BundleStore {
  private readonly root: string;
  private readonly serverUrl: () => string | undefined;
  private readonly links: SignedDownloads;

  constructor(dataDir: string, options: FileBundleStoreOptions = {}) {
    this.root = resolve(dataDir, BUNDLE_KEY_PREFIX);
    this.serverUrl = options.serverUrl ?? (() => undefined);
    this.links = new SignedDownloads(join(dataDir, DOWNLOADS_KEY_FILE), options.now ?? Date.now);
  }

  async put(key: string, data: Buffer, meta: BundleMeta): Promise<void> {
    const target = this.pathOf(key);
    assertSha256(data, meta.sha256);
    await this.makeDirs(dirname(target));
    const temp = `${target}.${randomUUID()}.tmp`;
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(data);
        // The umask can only take bits away; make the mode exact.
        await handle.chmod(0o600);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  /** The file's URL; a local runner reads it directly, so the lifetime is only validated. */
  async downloadUrl(key: string, ttlSeconds: number): Promise<string> {
    const path = this.pathOf(key);
    assertDownloadUrlTtl(ttlSeconds);
    return pathToFileURL(path).href;
  }

  /** A signed URL of the local server, which serves it (readShared) until it expires, as S3 would. */
  async shareUrl(key: string, ttlSeconds: number): Promise<string> {
    assertBundleKey(key);
    assertDownloadUrlTtl(ttlSeconds);
    const base = this.serverUrl();
    if (!base) throw new Error('The local server has no URL yet: shared links need it listening');
    return this.links.sign(base, key, ttlSeconds);
  }

  /**
   * The answer to a GET of a shared link's path and query: the bytes, or 403 for an expired or
   * altered link (S3's AccessDenied), or 404 for a key that is gone.
   */
  async readShared(pathname: string, query: URLSearchParams): Promise<SharedRead> {
    const forbidden = { status: 403, message: 'This download link is not valid' } as const;
    if (!pathname.startsWith(DOWNLOADS_PATH)) return forbidden;
    let key: string;
    try {
      // The path is the key itself: /downloads/bundles/payloads/….
      key = pathname.slice(DOWNLOADS_PATH.length).split('/').map(decodeURIComponent).join('/');
      assertBundleKey(key);
    } catch {
      return forbidden;
    }
    const check = await this.links.check(key, query);
    if (check === 'expired') return { status: 403, message: 'This download link has expired' };
    if (check !== 'ok') return forbidden;
    const body = await this.get(key);
    return body ? { status: 200, body } : { status: 404, message: 'Nothing is stored at this link any more' };
  }

  /** The key's file; the port's key rules, then a containment check as a second line. */
  private pathOf(key: string): string {
    assertBundleKey(key);
    const path = resolve(this.root, key.slice(BUNDLE_KEY_PREFIX.length));
    const rel = relative(this.root, path);
    if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || rel.startsWith(sep)) {
      throw new InvalidBundleKeyError('bundle key escapes the bundle directory');
    }
    return path;
  }

  /** Creates the directories from the bundle root down to `dir`, each 0700. */
  private async makeDirs(dir: string): Promise<void> {
    let current = this.root;
    const parts = relative(this.root, dir).split(sep).filter(Boolean);
    await mkdir(current, { recursive: true, mode: 0o700 });
    await chmod(current, 0o700);
    for (const part of parts) {
      current = join(current, part);
      await mkdir(current, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      await chmod(current, 0o700);
    }
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
