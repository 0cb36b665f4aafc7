/**
 * The code bundles tests build: `bundleOf` packs files as `agenthost publish` packs a directory
 * (what an author uploads); `tarGzOf` is node-tar's own tar.gz of a small project, with nested
 * paths, executables and symbolic links (what the sandboxes and the archive checks unpack).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { c as tarCreate } from 'tar';
import { packDirectory } from '../../functions/cli/pack.ts';

/** A tar.gz bundle of the given files, packed as the CLI packs a directory. */
export async function bundleOf(files: Record<string, string>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bundle-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return (await packDirectory(dir)).data;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * node-tar's tar.gz (portable headers) of a project holding `files` (paths may be nested; a file
 * starting with `#!` is executable, 0755, the others 0644) and the symbolic links `links` (name →
 * target, which need not exist). The archive lists the top-level entries in the order the files
 * name them, then the links.
 */
export async function tarGzOf(
  files: Record<string, string>,
  links: Record<string, string> = {},
): Promise<Buffer> {
  const project = await mkdtemp(join(tmpdir(), 'agenthost-project-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(project, path)), { recursive: true });
      await writeFile(join(project, path), content, { mode: content.startsWith('#!') ? 0o755 : 0o644 });
    }
    for (const [name, target] of Object.entries(links)) await symlink(target, join(project, name));
    const entries = [...new Set(Object.keys(files).map((p) => p.split('/')[0]!)), ...Object.keys(links)];
    return (await tarCreate({ gzip: true, cwd: project, portable: true }, entries).concat()) as Buffer;
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}
