/**
 * The host programs the local sandbox relies on: where bwrap, prlimit, setpriv and bash are found,
 * which of them a session needs, and bubblewrap's version (some options need a newer one).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SandboxUnavailableError } from '../../../ports/sandbox.ts';

const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

export function findTool(name: string): string | undefined {
  for (const dir of TOOL_DIRS) {
    const path = `${dir}/${name}`;
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** The helpers the sandbox runs (found on the host; /usr, /bin and /sbin are the same inside). */
export function requiredTools(asRoot: boolean): { prlimit: string; setpriv?: string; bash?: string } {
  const prlimit = findTool('prlimit');
  if (!prlimit)
    throw new SandboxUnavailableError(
      'prlimit (util-linux) was not found; the sandbox cannot apply its limits',
    );
  const setpriv = findTool('setpriv');
  if (asRoot && !setpriv) {
    throw new SandboxUnavailableError(
      'setpriv (util-linux) was not found; running as root, the sandbox needs it to drop to an unprivileged uid',
    );
  }
  const bash = findTool('bash');
  return { prlimit, ...(setpriv ? { setpriv } : {}), ...(bash ? { bash } : {}) };
}

export function bwrapVersion(bwrapPath: string): Promise<string> {
  return new Promise((resolvePromise, rejectPromise) => {
    execFile(bwrapPath, ['--version'], { timeout: 5000 }, (err, stdout) => {
      if (err) {
        rejectPromise(err);
        return;
      }
      const version = /(\d+\.\d+(?:\.\d+)?)/.exec(stdout)?.[1];
      if (!version) rejectPromise(new Error(`unexpected output: ${stdout.trim()}`));
      else resolvePromise(version);
    });
  });
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
