import { execFileSync } from 'node:child_process';
import { after } from 'node:test';

/**
 * Ends a test process that outlives its tests: a handle left open (a server an after hook that
 * failed never closed) keeps a process alive after its last test, and the run waited on it until
 * CI's own limit. Registered at the root once every test is declared (the end of a group's entry
 * file, test/setup/shared-processes.ts: a root hook registered earlier runs between two files of
 * the group), it waits `graceMs` after the last test without holding the process, then names what
 * is left open and exits with status 1, which the run reports as the file's failure.
 */
export function guardAgainstLingering(graceMs = 30_000): void {
  after(() => {
    setTimeout(() => {
      // This timer itself is among them.
      const open = process.getActiveResourcesInfo();
      process.stderr.write(
        `test process still running ${graceMs / 1000} s after its last test, held by: ${open.join(', ')}\n${children()}`,
      );
      process.exit(1);
    }, graceMs).unref();
  });
}

/** This process's children, as ps lists them (a pipe held open is often one of theirs). */
function children(): string {
  try {
    const list = execFileSync('ps', ['--ppid', String(process.pid), '-o', 'pid=,etime=,args='], {
      encoding: 'utf8',
    });
    return list.trim() === '' ? '' : `its children:\n${list}`;
  } catch {
    return '';
  }
}
