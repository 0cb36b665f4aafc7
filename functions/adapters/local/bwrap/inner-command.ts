/**
 * What runs before the user's command: the rlimits as prlimit options (both local sandboxes) or
 * shell builtins and, inside bubblewrap, the chain: setpriv (as root), then the init script that
 * sets the limits and starts the command.
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
 * The rlimits as dash's `ulimit` builtins (sizes in its units: `-f` 512-byte blocks, `-d` and `-v`
 * KiB, rounded down), so that the init shell sets them without a prlimit process of its own.
 */
export function ulimitScript(limits: SandboxLimits, processOffset: number): string {
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  return [
    // The soft limit first: a hard limit below the (unlimited) soft one is refused.
    `ulimit -S -t ${limits.cpuSeconds}`,
    `ulimit -H -t ${limits.cpuSeconds + 1}`,
    `ulimit -d ${kib(limits.memoryBytes)}`,
    `ulimit -v ${kib(limits.memoryBytes + ADDRESS_SPACE_HEADROOM)}`,
    `ulimit -p ${limits.processes + processOffset}`,
    `ulimit -f ${Math.max(1, Math.floor(limits.diskBytes / 512))}`,
    'ulimit -c 0',
  ].join(' && ');
}

/**
 * What bwrap runs: (as root) setpriv to the unprivileged uid, then an init shell that sets the
 * limits, writes the "started" marker, closes every inherited descriptor above 2 and execs
 * `/bin/sh -c command`.
 *
 * `knownDescriptors`: bwrap was started by the spawner, which holds no stray inherited descriptor
 * (spawner-process.ts), so the sandbox can only have inherited bwrap's own, 3 to 7: dash closes
 * them and sets the limits with its builtins. Otherwise (bwrap forked by the platform, which may
 * have inherited anything), prlimit sets the limits and bash closes whatever /proc/self/fd lists,
 * dash only 3 to 9 when the host has no bash.
 */
export function innerCommand(input: {
  asRoot: boolean;
  limits: SandboxLimits;
  tools: { prlimit: string; setpriv?: string; bash?: string };
  command: string;
  knownDescriptors: boolean;
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
  const processOffset = input.asRoot ? 0 : 1;
  const start = `cd ${SANDBOX_WORK_DIR} || exit 126; printf x >&6`;
  if (input.knownDescriptors) {
    const script = `${ulimitScript(input.limits, processOffset)} || exit 126; ${start}; exec 3>&- 4>&- 5>&- 6>&- 7>&-; exec /bin/sh -c "$1"`;
    return [...dropToUser, '/bin/sh', '-c', script, 'sandbox-init', input.command];
  }
  const limits = [tools.prlimit, ...rlimitArgs(input.limits, true, processOffset), '--'];
  const closeFds = tools.bash
    ? // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
      'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done'
    : 'exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-';
  const script = `${start}; ${closeFds}; exec /bin/sh -c "$1"`;
  return [...dropToUser, ...limits, tools.bash ?? '/bin/sh', '-c', script, 'sandbox-init', input.command];
}
