/**
 * The start-up check of the local platform (functions/local-platform/start.ts): whether bubblewrap, its
 * helper tools and pasta work on this host, found by running real probe sessions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bwrapVersion, findTool } from './host-tools.ts';
import { BwrapSandbox, type BwrapSandboxOptions } from './sandboxes.ts';

/**
 * Whether bubblewrap can run sandboxes here, for the start-up check: `bwrap --version`, the
 * helper tools (util-linux prlimit; setpriv when running as root), then real sessions running
 * `true` with the exact arguments every run uses, without network and with egress (pasta), in a
 * temporary runs directory unless one is given. Never throws.
 */
export async function detectBwrap(options: Partial<BwrapSandboxOptions> = {}): Promise<{
  available: boolean;
  version?: string;
  reason?: string;
  /** Whether egress sessions (services, orchestrators) can get their own network through pasta. */
  egress?: { available: boolean; reason?: string };
}> {
  const bwrapPath = options.bwrapPath ?? findTool('bwrap');
  if (!bwrapPath)
    return { available: false, reason: 'bwrap was not found in /usr/bin, /bin, /usr/sbin or /sbin' };
  let version: string;
  try {
    version = await bwrapVersion(bwrapPath);
  } catch (err) {
    return { available: false, reason: `${bwrapPath} --version failed: ${(err as Error).message}` };
  }
  const temp = options.runsDir ? undefined : await mkdtemp(join(tmpdir(), 'agenthost-bwrap-probe-'));
  const sandbox = new BwrapSandbox({
    ...options,
    bwrapPath,
    runsDir: options.runsDir ?? join(temp!, 'runs'),
  });
  /** A real session running `true` with the exact arguments every run of that network uses. */
  const probe = async (network: 'none' | 'egress'): Promise<string | undefined> => {
    const session = await sandbox.openSession({
      runId: `probe-${network}-${process.pid}-${Date.now()}`,
      workspaceId: 'probe',
      env: {},
      network,
      limits: {
        cpuSeconds: 5,
        memoryBytes: 256 * 1024 * 1024,
        processes: 8,
        outputBytes: 4096,
        diskBytes: 1024 * 1024,
      },
      deadlineMs: Date.now() + 10_000,
    });
    try {
      const result = await session.exec('true');
      if (result.exitCode === 0) return undefined;
      const why = result.timedOut
        ? 'timed out'
        : `ended with ${result.signal ?? `status ${result.exitCode}`}`;
      return `the probe sandbox ${why}: ${result.stderrTail.trim()}`;
    } finally {
      await session.close();
    }
  };
  try {
    const failed = await probe('none');
    if (failed) return { available: false, version, reason: failed };
    const egressFailed = await probe('egress').catch((err: Error) => err.message);
    return {
      available: true,
      version,
      egress: egressFailed ? { available: false, reason: egressFailed } : { available: true },
    };
  } catch (err) {
    return { available: false, version, reason: (err as Error).message };
  } finally {
    // The probe's sandbox is not the platform's (deps builds its own, whose spawner starts at the
    // first run): its spawner, a Node process of about 70 MB, must not outlive the probe.
    sandbox.spawner?.stop();
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}
