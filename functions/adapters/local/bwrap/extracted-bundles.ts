/**
 * Bundles extracted once and copied into each run's working directory, for both local sandboxes:
 * a second run of the same agent version neither decompresses nor checks its archive again.
 *
 * Each entry is the bundle's tree as extractBundle wrote it (with every check of upload time),
 * under `<runsDir>/.bundles/<sha256 of format and bytes>/`, never mounted into a sandbox: a run
 * gets its own writable copy, exactly as if it had been extracted for it, so a run can change its
 * bundle's files without touching the cached tree or another run. Keyed by content, an entry
 * serves only a caller holding the very same bytes (a deleted version's tree is of no use to
 * anyone else) and is evicted when more than `maxEntries` bundles were used since; the runs
 * directory's clearing at start-up (removeStaleRuns) removes them all.
 */
import { createHash } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { copyFile, lchown, lstat, mkdir, readdir, readlink, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { extractBundle } from '../../../shared/bundle-archive/extract.ts';
import type { Owner } from './host-work-dir.ts';
import { type PlaceBundle, removeTree } from './run-dir.ts';

/** Bundles kept extracted by default: the distinct versions run recently. */
export const DEFAULT_EXTRACTED_BUNDLES = 32;

interface Entry {
  dir: string;
  /** Copies in progress: an entry in use is never evicted. */
  using: number;
}

export class ExtractedBundles {
  private readonly root: string;
  private readonly maxEntries: number;
  /** In use order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Promise<Entry>>();
  /** How many bundles were extracted (the rest were copies): for tests. */
  extractions = 0;

  constructor(runsDir: string, maxEntries = DEFAULT_EXTRACTED_BUNDLES) {
    this.root = join(runsDir, '.bundles');
    this.maxEntries = maxEntries;
  }

  /**
   * Makes `dest` (which must not exist) hold the bundle's files, owned by `owner` when given, as
   * extractBundle would have made it. Throws what extractBundle throws for a bad bundle.
   */
  readonly place: PlaceBundle = async (bundle, dest, owner) => {
    const key = createHash('sha256').update(bundle.format).update('\0').update(bundle.data).digest('hex');
    let pending = this.entries.get(key);
    // Gone from disk (the runs directory was cleared): extracted again.
    if (pending && !existsSync(join(this.root, key))) {
      const entry = await pending.catch(() => undefined);
      if (entry && entry.using === 0) this.entries.delete(key);
      pending = this.entries.get(key);
    }
    if (pending) {
      this.entries.delete(key);
      this.entries.set(key, pending);
    } else {
      pending = this.extract(key, bundle);
      this.entries.set(key, pending);
      pending.catch(() => this.entries.delete(key));
    }
    const entry = await pending;
    entry.using++;
    try {
      await copyTree(entry.dir, dest, owner);
    } finally {
      entry.using--;
    }
    await this.evict();
  };

  private async extract(key: string, bundle: { data: Buffer; format: 'tar.gz' | 'zip' }): Promise<Entry> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const dir = join(this.root, key);
    // Extracted beside it and renamed: a half-written tree is never used.
    const temp = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    try {
      await extractBundle(bundle.data, bundle.format, temp);
      this.extractions++;
      await removeTree(dir);
      await rename(temp, dir);
    } catch (err) {
      await removeTree(temp);
      throw err;
    }
    return { dir, using: 0 };
  }

  private async evict(): Promise<void> {
    for (const [key, pending] of this.entries) {
      if (this.entries.size <= this.maxEntries) return;
      const entry = await pending.catch(() => undefined);
      if (entry && entry.using > 0) continue;
      this.entries.delete(key);
      if (entry) await removeTree(entry.dir);
    }
  }
}

/**
 * Copies the tree at `from` to `to` (created): directories, regular files (modes kept, a
 * copy-on-write clone where the filesystem can) and symlinks as they are, the entries of each
 * directory in parallel; each entry chowned to `owner` (lchown: a link itself, never its target).
 */
async function copyTree(from: string, to: string, owner: Owner | undefined): Promise<void> {
  const stat = await lstat(from);
  if (stat.isDirectory()) {
    await mkdir(to, { mode: stat.mode & 0o777 });
    if (owner) await lchown(to, owner.uid, owner.gid);
    await Promise.all((await readdir(from)).map((name) => copyTree(join(from, name), join(to, name), owner)));
  } else if (stat.isSymbolicLink()) {
    await symlink(await readlink(from), to);
    if (owner) await lchown(to, owner.uid, owner.gid);
  } else if (stat.isFile()) {
    await copyFile(from, to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    if (owner) await lchown(to, owner.uid, owner.gid);
  }
}
