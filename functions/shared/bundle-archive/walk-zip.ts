/*
 * Reading a .zip bundle with yauzl: entry kinds from the Unix mode bits, symlink targets read
 * (bounded), each entry through the EntryChecker before its content is handed to the visitor.
 */

import type { Readable } from 'node:stream';
import { fromBufferPromise, getFileNameLowLevel, type Entry as ZipEntry, type ZipFile } from 'yauzl';
import { type EntryChecker, type EntryKind, normalisePath, type Visit } from './entry-checker.ts';
import { quote, unprocessable } from './refusal.ts';

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

export async function walkZip(data: Buffer, checker: EntryChecker, visit: Visit): Promise<void> {
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
