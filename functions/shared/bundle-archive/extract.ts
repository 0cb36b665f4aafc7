/*
 * Extraction of a bundle to disk, every entry checked again as it is written (the rules are in
 * inspect.ts); used by the local sandbox, the ECS runner and the service app launcher.
 */

import {
  constants,
  createWriteStream,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  type WriteStream,
} from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BUNDLE_LIMITS, type BundleLimits } from '../bundle-limits.ts';
import { type CheckedEntry, EntryChecker, type EntryContent, parentOf } from './entry-checker.ts';
import type { BundleArchiveFormat } from './format.ts';
import { inspectBundle } from './inspect.ts';
import { BundleExtractionError, describeBytes, quote, Refusal, unprocessable } from './refusal.ts';
import { walk } from './walk.ts';

const tooBig = (limits: BundleLimits) =>
  unprocessable(`The code bundle expands to more than ${describeBytes(limits.maxUncompressedBytes)}.`);

/**
 * Writes a tar entry's content to its file. node-tar's entries are Minipass streams that yield
 * exactly the header's size, which the checker has counted: piped, and the file closed if the entry
 * is destroyed.
 */
function writeTarEntry(content: EntryContent | undefined, out: WriteStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const bail = (err: unknown) => {
      out.destroy();
      reject(err);
    };
    out.on('close', resolve).on('error', bail);
    if (!content) {
      out.end();
      return;
    }
    content.on('error', bail);
    content.pipe(out);
  });
}

/**
 * Extracts a bundle into `destDir` (created if missing; it must be empty). The bundle is inspected
 * first and then every entry is checked again as it is written. Files are written 0644 (0755 when
 * any execute bit was set) and directories 0755 (`destDir` itself 0700 when created here): no
 * setuid/setgid/sticky bits, no owners, no timestamps from the archive. Files are created with O_EXCL|O_NOFOLLOW into directories that are
 * checked with lstat to be real directories, and links are made only after every file is written,
 * hard links first, so nothing is ever written through a link. Throws BundleExtractionError;
 * after a failure `destDir` may hold part of the bundle, and the caller removes it.
 */
export async function extractBundle(
  data: Buffer,
  format: BundleArchiveFormat,
  destDir: string,
  limits: Partial<BundleLimits> = {},
): Promise<void> {
  const inspection = await inspectBundle(
    data,
    format === 'zip' ? 'application/zip' : 'application/gzip',
    limits,
  );
  if (!inspection.ok) throw new BundleExtractionError(inspection.code, inspection.message);
  const lim: BundleLimits = { ...BUNDLE_LIMITS, ...limits };

  mkdirSync(destDir, { recursive: true, mode: 0o700 });
  const root = realpathSync(destDir);
  if (readdirSync(root).length > 0) {
    throw new BundleExtractionError('INVALID_INPUT', `The extraction directory ${destDir} is not empty.`);
  }
  const knownDirs = new Set<string>([root]);
  const absolute = (path: string) => (path === '' ? root : join(root, ...path.split('/')));

  /** Makes (or checks) every directory from the root down to `path`; refuses anything else. */
  const ensureDir = (path: string) => {
    let current = root;
    for (const part of path.split('/').filter(Boolean)) {
      current = join(current, part);
      if (knownDirs.has(current)) continue;
      let stat: ReturnType<typeof lstatSync> | undefined;
      try {
        stat = lstatSync(current);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      if (!stat) mkdirSync(current, { mode: 0o755 });
      else if (!stat.isDirectory())
        throw unprocessable(`Bundle path ${quote(path)} passes through a non-directory.`);
      knownDirs.add(current);
    }
  };

  const links: CheckedEntry[] = [];
  let written = 0;
  const checker = new EntryChecker(lim);
  try {
    await walk(data, format, lim, checker, async (entry, content) => {
      if (entry.kind === 'dir') {
        ensureDir(entry.path);
        return;
      }
      if (entry.kind !== 'file') {
        links.push(entry);
        return;
      }
      ensureDir(parentOf(entry.path));
      const fd = openSync(
        absolute(entry.path),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        entry.mode & 0o111 ? 0o755 : 0o644,
      );
      const out = createWriteStream('', { fd });
      if (format === 'zip') {
        // yauzl checks each entry against its declared size; this caps the total as a second line.
        const cap = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            written += chunk.length;
            done(written > lim.maxUncompressedBytes ? tooBig(lim) : null, chunk);
          },
        });
        await pipeline(content ?? Readable.from([]), cap, out);
      } else {
        await writeTarEntry(content, out);
      }
    });
    checker.finish();

    for (const link of links.filter((l) => l.kind === 'hardlink')) {
      ensureDir(parentOf(link.path));
      const target = absolute(link.target ?? '');
      ensureDir(parentOf(link.target ?? ''));
      if (!lstatSync(target).isFile()) {
        throw unprocessable(
          `Bundle entry ${quote(link.path)} is a hard link to something that is not a file.`,
        );
      }
      linkSync(target, absolute(link.path));
    }
    for (const link of links.filter((l) => l.kind === 'symlink')) {
      ensureDir(parentOf(link.path));
      symlinkSync(link.target ?? '', absolute(link.path));
    }
  } catch (err) {
    if (err instanceof Refusal) throw new BundleExtractionError(err.code, err.message);
    if (err instanceof BundleExtractionError) throw err;
    throw new BundleExtractionError(
      'UNPROCESSABLE',
      `The code bundle could not be extracted: ${(err as Error).message}`,
    );
  }
}
