import { randomUUID } from 'node:crypto';
import type { SandboxSession } from '../../ports/sandbox.ts';
import type { Logger } from '../../shared/logger.ts';

/*
 * A managed loop's working directory across a replay (docs/runs.md, "Carried on"). A replayed tool
 * call is not run again, so what it wrote would be missing from the new process's sandbox: after
 * each call that may have written (every tool but the ones that only read), the files changed since
 * the run's session opened are recorded with the call's step, as a gzipped tar; a replay puts the
 * last recorded one back before its first live tool call. Extracted with their time set to now,
 * they count as changed in the new session too, so each snapshot holds all the run's changes so
 * far. A file deleted is not recorded as deleted.
 */

/**
 * The archives' names in the working directory while they are written and read, each its own
 * (calls of one turn run side by side), left out of every snapshot.
 */
const ARCHIVE_PREFIX = '.agenthost-workdir-';
/** A larger snapshot is not recorded: a replay puts back the one before it. */
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;

export interface WorkdirSnapshots {
  /** The files changed since the session opened, as base64; undefined when none could be taken. */
  take(): Promise<string | undefined>;
  /** Puts a snapshot back (its files written over what is there). */
  restore(snapshot: string): Promise<void>;
}

export function workdirSnapshots(session: SandboxSession, logger: Logger): WorkdirSnapshots {
  // To the millisecond (find reads a fraction): the bundle and the input, placed as the session
  // opened, are there again in any new session and are not recorded.
  const since = (Date.now() / 1000).toFixed(3);
  return {
    // A snapshot that cannot be taken (the run stopped meanwhile) leaves the call's files
    // unrecorded, never the call failed for it.
    take: () =>
      takeSnapshot(session, since, logger).catch((err: unknown) => {
        logger.warn('working directory not recorded', { error: String(err) });
        return undefined;
      }),
    async restore(snapshot) {
      const archive = `${ARCHIVE_PREFIX}${randomUUID()}.tgz`;
      await session.writeFile(archive, Buffer.from(snapshot, 'base64'));
      const put = await session.exec(`tar -xzmf ${archive} && rm -f -- ${archive}`);
      if (put.exitCode !== 0)
        logger.warn('working directory not put back', { exit: put.exitCode, stderr: put.stderrTail });
    },
  };
}

async function takeSnapshot(
  session: SandboxSession,
  since: string,
  logger: Logger,
): Promise<string | undefined> {
  const archive = `${ARCHIVE_PREFIX}${randomUUID()}.tgz`;
  // Its size first, from inside the sandbox: an agent that wrote gigabytes must not have them read
  // into the platform's memory.
  const made = await session.exec(
    `find . -type f -newermt @${since} ! -name '${ARCHIVE_PREFIX}*' -print0 | tar -czf ${archive} --null -T - && wc -c < ${archive}`,
  );
  const bytes = Number(made.stdout.trim());
  if (made.exitCode !== 0 || !Number.isFinite(bytes)) {
    await session.exec(`rm -f -- ${archive}`).catch(() => undefined);
    logger.warn('working directory not recorded', { exit: made.exitCode, stderr: made.stderrTail });
    return undefined;
  }
  if (bytes > MAX_SNAPSHOT_BYTES) {
    await session.exec(`rm -f -- ${archive}`);
    logger.warn('working directory too large to record', { bytes });
    return undefined;
  }
  const data = await session.readFile(archive);
  await session.exec(`rm -f -- ${archive}`);
  return data.toString('base64');
}
