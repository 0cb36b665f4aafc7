/*
 * Reading a .tar.gz bundle: gunzip with a cap on the decompressed bytes, then node-tar's strict
 * parser, each entry through the EntryChecker before its content is handed to the visitor.
 */

import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import type { BundleLimits } from '../bundle-limits.ts';
import type { EntryChecker, EntryKind, Visit } from './entry-checker.ts';
import { quote, unprocessable } from './refusal.ts';

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

export async function walkTar(
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
        pending.push(visit(checked, entry).catch(fail));
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
