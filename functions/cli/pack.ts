import { readdir, readlink } from 'node:fs/promises';
import { matchesGlob, posix, relative, resolve, sep } from 'node:path';

/** Never packed unless `bundle.include` names them: VCS data, installed dependencies, local env files. */
export const DEFAULT_EXCLUDES = [
  '**/.git/**',
  '**/.hg/**',
  '**/.svn/**',
  '**/node_modules/**',
  '**/__pycache__/**',
  '**/.venv/**',
  '**/venv/**',
  '**/.env',
  '**/.env.*',
  '**/.DS_Store',
  '*.tar.gz',
  '*.zip',
];

export interface PackResult {
  data: Buffer;
  files: string[];
}

/**
 * Packs an agent directory into a gzipped tarball for upload. A file is left out when it matches
 * an exclude pattern (the defaults, then `bundle.exclude`), unless it matches a `bundle.include`
 * pattern: include wins. Patterns are globs relative to the directory, matched with
 * `path.matchesGlob` (`dist/**` covers everything under dist/).
 * Symbolic links are packed as links only when they stay inside the directory; others are refused.
 * Entries carry no owner and a fixed mtime, so the same files give the same bytes.
 */
export async function packDirectory(
  dir: string,
  options: { exclude?: string[]; include?: string[] } = {},
): Promise<PackResult> {
  const root = resolve(dir);
  const exclude = [...DEFAULT_EXCLUDES, ...(options.exclude ?? [])];
  const include = options.include ?? [];
  const files: string[] = [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    const abs = resolve(entry.parentPath, entry.name);
    const rel = relative(root, abs).split(sep).join(posix.sep);
    if (entry.isDirectory()) continue;
    const included = include.some((g) => matchesGlob(rel, g));
    const excluded = exclude.some((g) => matchesGlob(rel, g));
    if (excluded && !included) continue;
    if (entry.isSymbolicLink()) {
      const target = resolve(entry.parentPath, await readlink(abs));
      if (target !== root && !target.startsWith(root + sep)) {
        throw new Error(
          `${rel} is a symbolic link that leaves the agent directory (${target}); remove it or exclude it`,
        );
      }
    } else if (!entry.isFile()) {
      continue;
    }
    files.push(rel);
  }
  files.sort();
  if (files.length === 0) throw new Error(`Nothing to pack in ${root} (every file is excluded)`);
  // tar (84 KB) is read when a bundle is packed, not on every start of the CLI.
  const { create: createTar } = await import('tar');
  const stream = createTar(
    { gzip: { level: 9 }, cwd: root, portable: true, mtime: new Date(0), follow: false, noDirRecurse: true },
    files,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { data: Buffer.concat(chunks), files };
}
