import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../shared/process-alive.ts';

/**
 * The temporary files a request leaves in the system's temporary directory while it runs (a
 * spooled call body here, a call's uploaded files in core/calls/call-input.ts), named
 * `agenthost-<body|call>-<pid>-…` after the process that owns them. Each request removes its own;
 * a process killed mid-request cannot, so the next start removes those whose process is gone
 * (never a live process's: several platforms, and parallel tests, share the directory).
 */
export function tempPrefix(kind: 'body'): string {
  return `agenthost-${kind}-${process.pid}-`;
}

const OWNED = /^agenthost-(?:body|call)-(\d+)-/;

/**
 * Removes what dead processes left; returns how many entries it removed. An entry that cannot be
 * removed (another user's, in a shared temporary directory: its sticky bit keeps it theirs) is left
 * as it is: a leftover never keeps the platform from starting.
 */
export async function removeOrphanTempFiles(
  dir = tmpdir(),
  remove: (path: string) => Promise<void> = (path) => rm(path, { recursive: true, force: true }),
): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const pid = Number(OWNED.exec(name)?.[1]);
    if (!pid || processAlive(pid)) continue;
    try {
      await remove(join(dir, name));
      removed++;
    } catch {
      // Not ours to remove: the next entries are still swept.
    }
  }
  return removed;
}
