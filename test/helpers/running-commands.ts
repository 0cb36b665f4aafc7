import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * How many processes on this machine run exactly `command` (its arguments as `ps` shows them): a
 * sandboxed command is a process of the host, so a test sees it start and sees it gone once
 * stopped. Give each test a command of its own (`sleep 37`), so that no other test's counts.
 */
export async function runningCommands(command: string): Promise<number> {
  const { stdout } = await run('ps', ['-eo', 'args']).catch(() => ({ stdout: '' }));
  return stdout.split('\n').filter((line) => line.trim() === command).length;
}
