/*
 * The bundle rules (inspect.ts lists them), applied entry by entry and then across entries: path
 * safety (normalised relative paths, links that stay inside the root), no special files, no path
 * twice, and the entry and size limits. The same checker serves both archive formats.
 */

import type { BundleLimits } from '../bundle-limits.ts';
import { describeBytes, quote, unprocessable } from './refusal.ts';

export type EntryKind = 'file' | 'dir' | 'symlink' | 'hardlink';

export interface CheckedEntry {
  /** Normalised: no '.', no empty segments, no trailing '/'; '' is the root. */
  path: string;
  kind: EntryKind;
  size: number;
  /** Permission bits only; extraction keeps just "executable or not". */
  mode: number;
  /** Symlinks: the target as written. Hard links: the normalised archive path of the target. */
  target?: string;
}

/**
 * A file entry's bytes, to read once: Node's Readable for a zip entry, node-tar's entry (a Minipass
 * stream, not a Readable) for a tar one. What a visitor may use of either.
 */
export interface EntryContent extends AsyncIterable<Buffer> {
  pipe<W extends NodeJS.WritableStream>(destination: W): W;
  on(event: 'error', listener: (err: unknown) => void): this;
}

/** Without a visitor (inspection), contents are skipped unread. */
export type Visit = ((entry: CheckedEntry, content: EntryContent | undefined) => Promise<void>) | undefined;

/** Normalises an entry path, or refuses it. */
export function normalisePath(raw: string, what: string): string {
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

export const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** Every proper ancestor of a normalised path, shallowest first ('a', 'a/b' for 'a/b/c'). */
function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Symlink hops allowed while resolving one target (Linux's own limit). */
const MAX_LINK_HOPS = 40;

export class EntryChecker {
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
