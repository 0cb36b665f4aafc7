import { chmod, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The data dir is its owner's alone: it holds every record (server-only prompts, hashed keys,
 * encrypted secrets with the key that opens them), so no other local user may read or list it.
 * It is made 0700, and what the platform writes there 0600 (directories 0700), each where it is
 * created: the SQLite files (sqlite-database.ts, and SQLite gives the -wal and -shm files the
 * database's mode), the lock (data-dir-lock.ts), the keys, the bundles.
 *
 * Not through the process's umask: the platform's children inherit it, and some must write files
 * another user reads (the bubblewrap sandbox's synthetic /etc files, `runs/.identity`, read by the
 * sandbox's unprivileged user when the platform runs as root; the files a sandboxed run writes for
 * itself).
 *
 * A data dir made by an older version (755, its database 644) is tightened at start, whole: found
 * by any group or other access on the dir or its first level, which this version never leaves.
 * The sandboxes' trees are left as they are (`runs/` and the emulated deployment's `aws/tasks/`,
 * under 0700 directories): a run's files keep the modes its bundle gave them, and the start
 * removes what a previous platform left there anyway.
 */

const GROUP_OR_OTHER = 0o077;
/** Trees whose entries keep their own modes (see above): only the directory itself is tightened. */
const SANDBOX_TREES = new Set(['runs', join('aws', 'tasks')]);

/**
 * Creates the data dir 0700, or makes an existing one its owner's alone; the number of entries
 * that had group or other access (0 when there was nothing to do).
 */
export async function ownerOnlyDataDir(dataDir: string): Promise<number> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // The dir itself followed if it is a symlink; entries inside never are.
  const root = await stat(dataDir);
  const entries = await readdir(dataDir);
  let loose = (root.mode & GROUP_OR_OTHER) !== 0;
  for (const name of entries) {
    if (loose) break;
    const entry = await lstat(join(dataDir, name)).catch(() => undefined);
    loose = entry !== undefined && !entry.isSymbolicLink() && (entry.mode & GROUP_OR_OTHER) !== 0;
  }
  if (!loose) return 0;
  let tightened = 0;
  if (root.mode & GROUP_OR_OTHER) {
    await chmod(dataDir, root.mode & 0o700);
    tightened++;
  }
  const walk = async (relative: string): Promise<void> => {
    for (const name of await readdir(join(dataDir, relative)).catch(() => [] as string[])) {
      const path = join(relative, name);
      const entry = await lstat(join(dataDir, path)).catch(() => undefined);
      if (!entry || entry.isSymbolicLink()) continue;
      if (entry.mode & GROUP_OR_OTHER) {
        await chmod(join(dataDir, path), entry.mode & 0o700);
        tightened++;
      }
      if (entry.isDirectory() && !SANDBOX_TREES.has(path)) await walk(path);
    }
  };
  await walk('');
  return tightened;
}

/** What the start says when it tightened a data dir. */
export function tightenedLine(dataDir: string, tightened: number): string {
  return `Data dir ${dataDir}: ${tightened} ${tightened === 1 ? 'entry' : 'entries'} other users could read or list (made by an older version) are now its owner's only (directories 0700, files 0600)`;
}
