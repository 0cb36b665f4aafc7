import { createHash } from 'node:crypto';
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
} from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { fromBufferPromise, getFileNameLowLevel, type Entry as ZipEntry, type ZipFile } from 'yauzl';
import {
  BUNDLE_LIMITS,
  type BundleLimits,
  GENERIC_CONTENT_TYPES,
  GZIP_CONTENT_TYPES,
  ZIP_CONTENT_TYPES,
} from './bundle-limits.ts';

export { BUNDLE_LIMITS, type BundleLimits, GENERIC_CONTENT_TYPES, GZIP_CONTENT_TYPES, ZIP_CONTENT_TYPES };

/**
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
 * Limits against archive bombs: 25 MB on the wire (the size the spec's sample error names),
 * 10,000 entries (a project with vendored dependencies fits; a zip's count is checked before its
 * first entry), 200 MB in total across regular files (8x the upload limit: what extraction may
 * write to disk; checked from each entry's header before its data is read). The decompressed tar
 * stream (headers and padding included) is cut off at that plus 4 KiB per allowed entry plus
 * 64 KiB, so zeros after the archive cannot make us inflate gigabytes. Uncompressed tar, zstd and
 * brotli are not accepted.
 */

export type BundleArchiveFormat = 'tar.gz' | 'zip';

export type BundleInspection =
  | { ok: true; format: BundleArchiveFormat; entries: number; uncompressedBytes: number; sha256: string }
  | {
      ok: false;
      code: 'DOCUMENT_TOO_LARGE' | 'UNSUPPORTED_TYPE' | 'UNPROCESSABLE' | 'INVALID_INPUT';
      message: string;
    };

type RefusalCode = Extract<BundleInspection, { ok: false }>['code'];

const ACCEPTED_TYPES = [...GZIP_CONTENT_TYPES, ...ZIP_CONTENT_TYPES, ...GENERIC_CONTENT_TYPES].join(', ');

/** Thrown by extractBundle when the bundle breaks a rule or cannot be written safely. */
export class BundleExtractionError extends Error {
  override name = 'BundleExtractionError';
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** A rule broken while walking an archive; becomes the `{ ok: false }` result. */
class Refusal extends Error {
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

const unprocessable = (message: string) => new Refusal('UNPROCESSABLE', message);

/** An entry path for messages: quoted, control characters escaped, long ones shortened. */
function quote(path: string): string {
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return JSON.stringify(shown);
}

const tooBig = (limits: BundleLimits) =>
  unprocessable(`The code bundle expands to more than ${describeBytes(limits.maxUncompressedBytes)}.`);

function describeBytes(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes % mib === 0 ? `${bytes / mib} MB` : `${bytes} bytes`;
}

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

/** The archive format from the magic bytes, cross-checked with the declared type. */
function detectFormat(data: Buffer, declaredContentType: string | undefined): BundleArchiveFormat {
  const declared = (declaredContentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const isGzip = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b;
  const isZip =
    data.length >= 4 &&
    data[0] === 0x50 &&
    data[1] === 0x4b &&
    ((data[2] === 0x03 && data[3] === 0x04) || (data[2] === 0x05 && data[3] === 0x06));
  const sniffed: BundleArchiveFormat | undefined = isGzip ? 'tar.gz' : isZip ? 'zip' : undefined;
  const declaredFormat: BundleArchiveFormat | 'any' | undefined =
    declared === '' || GENERIC_CONTENT_TYPES.includes(declared)
      ? 'any'
      : GZIP_CONTENT_TYPES.includes(declared)
        ? 'tar.gz'
        : ZIP_CONTENT_TYPES.includes(declared)
          ? 'zip'
          : undefined;
  if (declaredFormat === undefined) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `Content-Type ${quote(declared)} is not a code bundle type; send a .tar.gz or .zip archive as one of: ${ACCEPTED_TYPES}.`,
    );
  }
  if (!sniffed) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `The code bundle is neither a gzip-compressed tar archive nor a zip archive; send a .tar.gz or .zip archive as one of: ${ACCEPTED_TYPES}.`,
    );
  }
  if (declaredFormat !== 'any' && declaredFormat !== sniffed) {
    throw new Refusal(
      'UNSUPPORTED_TYPE',
      `Content-Type ${declared} says ${declaredFormat} but the bytes are a ${sniffed} archive; send it as ${sniffed === 'zip' ? 'application/zip' : 'application/gzip'} or application/octet-stream.`,
    );
  }
  return sniffed;
}

// ---------------------------------------------------------------------------------------------
// The rules, applied entry by entry and then across entries.

type EntryKind = 'file' | 'dir' | 'symlink' | 'hardlink';

interface CheckedEntry {
  /** Normalised: no '.', no empty segments, no trailing '/'; '' is the root. */
  path: string;
  kind: EntryKind;
  size: number;
  /** Permission bits only; extraction keeps just "executable or not". */
  mode: number;
  /** Symlinks: the target as written. Hard links: the normalised archive path of the target. */
  target?: string;
}

/** Normalises an entry path, or refuses it. */
function normalisePath(raw: string, what: string): string {
  if (raw.length === 0) throw unprocessable(`A bundle entry has an empty ${what}.`);
  const refuse = (why: string) => unprocessable(`Bundle entry ${quote(raw)}: ${what} ${why}.`);
  if (raw.includes('\0')) throw refuse('contains a NUL character');
  if (raw.includes('\\')) throw refuse('contains a backslash');
  if (/^[a-zA-Z]:/.test(raw)) throw refuse('is a Windows drive path');
  if (raw.startsWith('/')) throw refuse('is absolute');
  const segments = raw.split('/');
  if (segments.includes('..')) throw refuse('has a ".." segment');
  return segments.filter((s) => s !== '' && s !== '.').join('/');
}

const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** Every proper ancestor of a normalised path, shallowest first ('a', 'a/b' for 'a/b/c'). */
function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Symlink hops allowed while resolving one target (Linux's own limit). */
const MAX_LINK_HOPS = 40;

class EntryChecker {
  entries = 0;
  uncompressedBytes = 0;
  private files = 0;
  readonly limits: BundleLimits;
  private readonly byPath = new Map<string, CheckedEntry>();
  private readonly links: CheckedEntry[] = [];

  constructor(limits: BundleLimits) {
    this.limits = limits;
  }

  /** Counts an entry before anything else is looked at, so a bomb stops early. */
  count(): void {
    this.entries++;
    if (this.entries > this.limits.maxEntries) {
      throw unprocessable(`The code bundle has more than ${this.limits.maxEntries} entries.`);
    }
  }

  /** Checks one entry's own rules and its place among the earlier ones; returns it normalised. */
  add(raw: {
    path: string;
    kind: EntryKind | 'special';
    typeName: string;
    size: number;
    mode: number;
    linkTarget?: string;
  }): CheckedEntry {
    const path = normalisePath(raw.path, 'path');
    if (raw.kind === 'special') {
      throw unprocessable(
        `Bundle entry ${quote(raw.path)} is a ${raw.typeName}; only files, directories and links are allowed.`,
      );
    }
    if (path === '' && raw.kind !== 'dir') {
      throw unprocessable(`Bundle entry ${quote(raw.path)} names the bundle root but is not a directory.`);
    }
    const entry: CheckedEntry = {
      path,
      kind: raw.kind,
      size: raw.kind === 'file' ? raw.size : 0,
      mode: raw.mode & 0o777,
    };
    if (raw.kind === 'symlink' || raw.kind === 'hardlink') {
      const target = raw.linkTarget ?? '';
      const what = raw.kind === 'symlink' ? 'symbolic link' : 'hard link';
      const refuse = (why: string) =>
        unprocessable(`Bundle entry ${quote(raw.path)} is a ${what} ${why} (${quote(target)}).`);
      if (target === '') throw refuse('with an empty target');
      if (target.includes('\0') || target.includes('\\')) throw refuse('whose target has a NUL or backslash');
      if (target.startsWith('/') || /^[a-zA-Z]:/.test(target)) throw refuse('to an absolute path');
      if (raw.kind === 'symlink') {
        // Lexically first; links it passes through are followed once all entries are known.
        if (lexicalResolve(parentOf(path), target) === undefined)
          throw refuse('that points outside the bundle');
        entry.target = target;
      } else {
        if (target.split('/').includes('..')) throw refuse('that points outside the bundle');
        const resolved = target
          .split('/')
          .filter((s) => s !== '' && s !== '.')
          .join('/');
        if (this.byPath.get(resolved)?.kind !== 'file') {
          throw refuse('to something that is not a regular file earlier in the bundle');
        }
        entry.target = resolved;
      }
      this.links.push(entry);
    }
    const earlier = this.byPath.get(path);
    if (earlier && !(earlier.kind === 'dir' && entry.kind === 'dir')) {
      throw unprocessable(`Bundle entry ${quote(raw.path)} appears more than once.`);
    }
    if (entry.kind === 'file') {
      this.files++;
      this.uncompressedBytes += entry.size;
      if (this.uncompressedBytes > this.limits.maxUncompressedBytes) {
        throw unprocessable(
          `The code bundle expands to more than ${describeBytes(this.limits.maxUncompressedBytes)} (at ${quote(raw.path)}).`,
        );
      }
    }
    this.byPath.set(path, entry);
    return entry;
  }

  /** Rules across entries: nothing below a non-directory, link targets resolved through links. */
  finish(): void {
    for (const entry of this.byPath.values()) {
      for (const ancestor of ancestors(entry.path)) {
        const holder = this.byPath.get(ancestor);
        if (holder && holder.kind !== 'dir') {
          throw unprocessable(
            `Bundle entry ${quote(entry.path)} lies below ${quote(ancestor)}, which is a ${holder.kind === 'file' ? 'file' : 'link'}.`,
          );
        }
      }
    }
    for (const link of this.links) {
      if (link.kind !== 'symlink') continue;
      const outcome = this.resolveSymlink(link);
      if (outcome !== 'inside') {
        throw unprocessable(
          outcome === 'loop'
            ? `Bundle entry ${quote(link.path)} is a symbolic link in a loop of links.`
            : `Bundle entry ${quote(link.path)} is a symbolic link that points outside the bundle through another link (${quote(link.target ?? '')}).`,
        );
      }
    }
    if (this.files === 0) throw unprocessable('The code bundle holds no files.');
  }

  /** Resolves a symlink's target from its directory, expanding every link it passes through. */
  private resolveSymlink(link: CheckedEntry): 'inside' | 'outside' | 'loop' {
    const stack = parentOf(link.path).split('/').filter(Boolean);
    const queue = (link.target ?? '').split('/');
    let hops = 0;
    while (queue.length > 0) {
      const part = queue.shift() as string;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (stack.length === 0) return 'outside';
        stack.pop();
        continue;
      }
      stack.push(part);
      const through = this.byPath.get(stack.join('/'));
      // The last component may itself be a link: that link is checked on its own.
      if (through?.kind === 'symlink' && queue.some((p) => p !== '' && p !== '.')) {
        if (++hops > MAX_LINK_HOPS) return 'loop';
        stack.pop();
        const next = through.target ?? '';
        if (next.startsWith('/')) return 'outside';
        queue.unshift(...next.split('/'));
      }
    }
    return 'inside';
  }
}

/** Resolves `target` against directory `from` by name alone; undefined when it climbs out. */
function lexicalResolve(from: string, target: string): string | undefined {
  const stack = from.split('/').filter(Boolean);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return undefined;
      stack.pop();
    } else {
      stack.push(part);
    }
  }
  return stack.join('/');
}

// ---------------------------------------------------------------------------------------------
// Walking the two formats. `visit` sees each checked entry with a way to read its content.

/** Without a visitor (inspection), contents are skipped unread. */
type Visit = ((entry: CheckedEntry, content: Readable | undefined) => Promise<void>) | undefined;

async function walk(
  data: Buffer,
  format: BundleArchiveFormat,
  limits: BundleLimits,
  checker: EntryChecker,
  visit: Visit,
): Promise<void> {
  if (format === 'zip') await walkZip(data, checker, visit);
  else await walkTar(data, limits, checker, visit);
}

function tarKind(type: string): EntryKind | 'special' {
  switch (type) {
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      return 'file';
    case 'Directory':
    case 'GNUDumpDir':
      return 'dir';
    case 'SymbolicLink':
      return 'symlink';
    case 'Link':
      return 'hardlink';
    default:
      return 'special';
  }
}

const TAR_TYPE_NAMES: Record<string, string> = {
  CharacterDevice: 'character device',
  BlockDevice: 'block device',
  FIFO: 'FIFO',
};

async function walkTar(
  data: Buffer,
  limits: BundleLimits,
  checker: EntryChecker,
  visit: Visit,
): Promise<void> {
  // Headers, pax records and padding on top of the file bytes: generous, but bounded.
  const maxStreamBytes = limits.maxUncompressedBytes + limits.maxEntries * 4096 + 64 * 1024;
  const parser = new Parser({ strict: true, zstd: false });
  let failure: unknown;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const fail = (err: unknown) => {
    failure ??= err;
    poke();
  };
  let ended = false;
  const pending: Promise<void>[] = [];
  /** File entries handed to the visitor and not yet fully read; destroyed if the walk fails. */
  const reading = new Set<ReadEntry>();

  parser.on('error', (err: Error) =>
    fail(unprocessable(`The tar archive is corrupt: ${err.message.replace(/^TAR_[A-Z_]+: /, '')}`)),
  );
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    entry.resume();
    fail(
      unprocessable(
        entry.meta
          ? `Bundle entry ${quote(entry.path)} has an oversized ${entry.type} header.`
          : `Bundle entry ${quote(entry.path)} has an unsupported type (${entry.type}); only files, directories and links are allowed.`,
      ),
    );
  });
  parser.on('entry', (entry: ReadEntry) => {
    if (failure) {
      entry.resume();
      return;
    }
    try {
      checker.count();
      const kind = tarKind(entry.type);
      const checked = checker.add({
        path: entry.path,
        kind,
        typeName: TAR_TYPE_NAMES[entry.type] ?? `${entry.type} entry`,
        size: entry.size,
        mode: entry.mode ?? 0o644,
        ...(entry.linkpath !== undefined ? { linkTarget: entry.linkpath } : {}),
      });
      if (visit && checked.kind === 'file') {
        reading.add(entry);
        entry.on('end', () => reading.delete(entry));
        pending.push(visit(checked, entry as unknown as Readable).catch(fail));
      } else {
        entry.resume();
        if (visit) pending.push(visit(checked, undefined).catch(fail));
      }
    } catch (err) {
      entry.resume();
      fail(err);
    }
  });
  parser.on('drain', poke);
  parser.on('end', () => {
    ended = true;
    poke();
  });

  const gunzip = createGunzip();
  gunzip.end(data);
  let total = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (failure) break;
      if (total === 0 && chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b) {
        fail(unprocessable('The gzip stream holds another gzip stream, not a tar archive.'));
        break;
      }
      total += chunk.length;
      if (total > maxStreamBytes) {
        fail(unprocessable(`The code bundle decompresses to more than ${maxStreamBytes} bytes.`));
        break;
      }
      if (!parser.write(chunk) && !failure) await new Promise<void>((resolve) => (wake = resolve));
    }
  } catch (err) {
    fail(unprocessable(`The gzip stream is corrupt: ${(err as Error).message}`));
  }
  if (!failure) {
    parser.end();
    while (!ended && !failure) await new Promise<void>((resolve) => (wake = resolve));
  }
  if (failure) {
    gunzip.destroy();
    for (const entry of reading) entry.destroy(failure as Error);
  }
  await Promise.all(pending);
  if (failure) throw failure;
}

// Unix file types in the high bits of a zip entry's external attributes.
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const ZIP_SPECIAL_TYPES: Record<number, string> = {
  2401: 'FIFO',
  4802: 'character device',
  14406: 'block device',
  26411: 'socket',
};
/** Creator systems whose external attributes carry a Unix mode: Unix and macOS. */
const UNIX_CREATORS = new Set([3, 19]);
/** Longest symlink target read from a zip (PATH_MAX). */
const MAX_LINK_TARGET = 4096;

function zipKind(
  entry: ZipEntry,
  name: string,
): { kind: EntryKind | 'special'; typeName: string; mode: number } {
  const unix = UNIX_CREATORS.has(entry.versionMadeBy >> 8);
  const mode = unix ? (entry.externalFileAttributes >>> 16) & 0xffff : 0;
  const type = mode & S_IFMT;
  const special = ZIP_SPECIAL_TYPES[type];
  if (special) return { kind: 'special', typeName: special, mode };
  if (type === S_IFLNK) return { kind: 'symlink', typeName: 'symbolic link', mode };
  // MS-DOS attribute 0x10 is "directory"; a trailing '/' is the zip convention.
  if (type === S_IFDIR || name.endsWith('/') || (!unix && (entry.externalFileAttributes & 0x10) !== 0)) {
    return { kind: 'dir', typeName: 'directory', mode };
  }
  if (type === 0 || type === S_IFREG) return { kind: 'file', typeName: 'file', mode: mode || 0o644 };
  return { kind: 'special', typeName: `entry of unknown type 0o${type.toString(8)}`, mode };
}

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > max) {
      stream.destroy();
      throw unprocessable('A symbolic link target in the bundle is too long.');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function walkZip(data: Buffer, checker: EntryChecker, visit: Visit): Promise<void> {
  let zip: ZipFile;
  try {
    // decodeStrings off: names are decoded below without yauzl's own checks (which would throw
    // before we can name the entry), then go through the same rules as tar paths.
    zip = await fromBufferPromise(data, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (err) {
    throw unprocessable(`The zip archive is corrupt: ${(err as Error).message}`);
  }
  try {
    if (zip.entryCount > checker.limits.maxEntries) {
      throw unprocessable(`The code bundle has more than ${checker.limits.maxEntries} entries.`);
    }
    const entries = zip.eachEntry();
    while (true) {
      let next: IteratorResult<ZipEntry>;
      try {
        next = await entries.next();
      } catch (err) {
        throw unprocessable(`The zip archive is corrupt: ${(err as Error).message}`);
      }
      if (next.done) break;
      const entry = next.value;
      checker.count();
      const name = getFileNameLowLevel(
        entry.generalPurposeBitFlag,
        entry.fileNameRaw,
        entry.extraFields,
        true,
      );
      const { kind, typeName, mode } = zipKind(entry, name);
      if ((kind === 'file' || kind === 'symlink') && (entry.isEncrypted() || !entry.canDecodeFileData())) {
        normalisePath(name, 'path');
        throw unprocessable(
          `Bundle entry ${quote(name)} is ${entry.isEncrypted() ? 'encrypted' : `compressed with unsupported method ${entry.compressionMethod}`}.`,
        );
      }
      let linkTarget: string | undefined;
      if (kind === 'symlink') {
        normalisePath(name, 'path');
        if (entry.uncompressedSize > MAX_LINK_TARGET) {
          throw unprocessable(
            `Bundle entry ${quote(name)} is a symbolic link with a target that is too long.`,
          );
        }
        linkTarget = (await readAll(await openZipEntry(zip, entry), MAX_LINK_TARGET)).toString('utf8');
      }
      const checked = checker.add({
        path: name,
        kind,
        typeName,
        size: entry.uncompressedSize,
        mode,
        ...(linkTarget !== undefined ? { linkTarget } : {}),
      });
      if (visit) await visit(checked, checked.kind === 'file' ? await openZipEntry(zip, entry) : undefined);
    }
  } finally {
    zip.close();
  }
}

async function openZipEntry(zip: ZipFile, entry: ZipEntry): Promise<Readable> {
  try {
    return await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw unprocessable(`The zip archive is corrupt: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Extraction

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
        // node-tar's entries are Minipass streams that yield exactly the header's size, which the
        // checker has counted: pipe them, and close the file if the entry is destroyed.
        await new Promise<void>((resolve, reject) => {
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
