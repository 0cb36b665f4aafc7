/**
 * What runs before the user's command: the rlimits as prlimit options (both local sandboxes) and,
 * inside bubblewrap, the chain setpriv, prlimit, then the init script that starts the command.
 */
import type { SandboxLimits } from '../../../ports/sandbox.ts';
import { SANDBOX_WORK_DIR } from '../../../shared/sandbox-conventions.ts';
import { INSIDE_ID } from './sandbox-user.ts';

/** Address space allowed on top of the memory limit, for reservations runtimes make but never touch (V8: ~1.2 GB at start). */
const ADDRESS_SPACE_HEADROOM = 4 * 1024 * 1024 * 1024;

/** The rlimits, as prlimit options. */
export function rlimitArgs(limits: SandboxLimits, processLimit: boolean, processOffset = 0): string[] {
  return [
    // Soft limit: SIGXCPU; one second later, SIGKILL.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    // Data segment and private writable mappings: what malloc, V8's heap and Python's objects use.
    `--data=${limits.memoryBytes}`,
    // Address space with headroom: catches shared mappings, which RLIMIT_DATA does not count.
    `--as=${limits.memoryBytes + ADDRESS_SPACE_HEADROOM}`,
    ...(processLimit ? [`--nproc=${limits.processes + processOffset}`] : []),
    `--fsize=${limits.diskBytes}`,
    '--core=0',
  ];
}

/**
 * What bwrap runs: (as root) setpriv to the unprivileged uid, prlimit, then a shell that writes
 * the "started" marker, closes every inherited descriptor above 2 and execs `/bin/sh -c command`.
 */
export function innerCommand(input: {
  asRoot: boolean;
  limits: SandboxLimits;
  tools: { prlimit: string; setpriv?: string; bash?: string };
  command: string;
}): string[] {
  const { tools } = input;
  const dropToUser =
    input.asRoot && tools.setpriv
      ? [
          tools.setpriv,
          `--reuid=${INSIDE_ID}`,
          `--regid=${INSIDE_ID}`,
          '--clear-groups',
          '--bounding-set=-all',
          '--inh-caps=-all',
          '--',
        ]
      : [];
  // Unprivileged, bwrap's own pid 1 (its reaper) shares the uid and counts against RLIMIT_NPROC.
  const limits = [tools.prlimit, ...rlimitArgs(input.limits, true, input.asRoot ? 0 : 1), '--'];
  const closeFds = tools.bash
    ? // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
      'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done'
    : 'exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-';
  const script = `cd ${SANDBOX_WORK_DIR} || exit 126; printf x >&6; ${closeFds}; exec /bin/sh -c "$1"`;
  return [...dropToUser, ...limits, tools.bash ?? '/bin/sh', '-c', script, 'sandbox-init', input.command];
}
