/**
 * bwrap's command line for one exec: the namespaces, the user and capabilities, the environment,
 * then the filesystem (filesystem-view.ts). bubblewrap reads it from fd 3 (bwrap-session.ts).
 */
import type { SandboxLimits } from '../../../ports/sandbox.ts';
import { SANDBOX_WORK_DIR } from '../../../shared/sandbox-conventions.ts';
import { filesystemArgs, SANDBOX_NODE_DIR } from './filesystem-view.ts';
import { compareVersions } from './host-tools.ts';
import { INSIDE_ID } from './sandbox-user.ts';

/**
 * bwrap's options for one exec (everything before the command). Exported for docs and tests;
 * `identityDir` holds the synthetic passwd, group, hosts and nsswitch.conf.
 */
export function bwrapArgs(input: {
  version: string;
  asRoot: boolean;
  network: 'none' | 'egress';
  limits: SandboxLimits;
  env: Record<string, string>;
  work: string;
  identityDir: string;
  nodePath: string;
}): string[] {
  const atLeast = (v: string) => compareVersions(input.version, v) >= 0;
  // The network is unshared too, also for egress: pasta gives that namespace its network
  // (pasta-network.ts), and bwrap waits on fd 7 until it has.
  const args: string[] = ['--unshare-all', '--unshare-user'];
  if (input.network === 'egress') args.push('--block-fd', '7');
  if (input.asRoot) {
    // The parent writes the id maps (see sandboxes.ts's module comment); bwrap waits for them.
    args.push('--info-fd', '4', '--userns-block-fd', '5');
    args.push(
      '--cap-drop',
      'ALL',
      '--cap-add',
      'CAP_SETUID',
      '--cap-add',
      'CAP_SETGID',
      '--cap-add',
      'CAP_SETPCAP',
    );
  } else if (input.network === 'egress') {
    // pasta must enter the user namespace that owns the sandbox's network namespace. Unprivileged,
    // bwrap nests a second user namespace (where the command runs) for --disable-userns and for
    // the devpts of --dev; nobody remains in the first one, so pasta could not reach it. So: no
    // nesting (as when running as root, new user namespaces stay possible inside) and a /dev
    // without devpts (devNodeArgs, filesystem-view.ts).
    args.push('--info-fd', '4');
    args.push('--uid', String(INSIDE_ID), '--gid', String(INSIDE_ID), '--cap-drop', 'ALL');
  } else {
    if (atLeast('0.8.0')) args.push('--disable-userns');
    args.push('--uid', String(INSIDE_ID), '--gid', String(INSIDE_ID), '--cap-drop', 'ALL');
  }
  args.push('--die-with-parent', '--new-session', '--hostname', 'sandbox');
  args.push('--clearenv');
  const env: Record<string, string> = {
    PATH: `${SANDBOX_NODE_DIR}:/usr/local/bin:/usr/bin:/bin`,
    HOME: SANDBOX_WORK_DIR,
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    ...input.env,
  };
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);

  args.push(
    ...filesystemArgs({
      version: input.version,
      asRoot: input.asRoot,
      network: input.network,
      diskBytes: input.limits.diskBytes,
      work: input.work,
      identityDir: input.identityDir,
      nodePath: input.nodePath,
    }),
  );
  return args;
}
