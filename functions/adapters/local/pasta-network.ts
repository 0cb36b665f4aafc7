import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PublishPortTakenError, SandboxUnavailableError } from '../../ports/sandbox.ts';

/**
 * A sandbox's own network, for sessions with `egress` (always-on services, orchestrators).
 *
 * Sharing the host's network would let user code reach everything bound to the host's loopback:
 * the platform's own port, other services, a model endpoint. So an egress sandbox gets its own
 * network namespace (bwrap unshares it like every other), and pasta (Debian's `passt` package, a
 * user-mode network stack) is attached to that namespace before the command runs:
 *
 * - outbound: a tap interface with a default route; pasta makes the connections from the host with
 *   ordinary sockets (`--no-map-gw`: the gateway address is not the host, so the host's loopback is
 *   not behind it). The host's other addresses are reached as any outside client would.
 * - the host's loopback: only the TCP ports listed (`-T`), each at the same port on the sandbox's
 *   own 127.0.0.1; nothing else (`-U none`: no UDP either).
 * - inbound: at most one port, the service's, from 127.0.0.1:<hostPort> on the host to
 *   <port> inside (`-t`); nothing else is published.
 * - a plan without `outbound` leaves the namespace's interface unconfigured (no `--config-net`):
 *   no address, no route, so the listed loopback ports are the only way out.
 *
 * pasta daemonizes once the namespace is configured, so its launcher's exit is the moment the
 * sandbox may start; the daemon's pid goes to a file beside the run directories
 * (`<runsDir>/.pasta/`), and the exec ends it when it ends (it would otherwise stay, holding the
 * namespace). Daemons still running when this process exits are killed on the way out; a crashed
 * platform's are ended at the next start by removeStaleRuns (bwrap/run-dir.ts), from those files.
 */

const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];
/** pasta's process name (the binary is passt, or passt.avx2 on x86-64). */
const PASTA_COMM = /^passt/;
const PIDFILE = /\.pid$/;
/**
 * Where the pid files live: beside the run directories, not in them. A session's close removes its
 * run directory, possibly before an exec killed mid-attach has ended its pasta.
 */
export const PASTA_PID_DIR = '.pasta';
/** How long pasta may take to configure the namespace before the exec is given up. */
const ATTACH_TIMEOUT_MS = 10_000;

export interface NetworkPlan {
  /** Host loopback TCP ports the sandbox may reach, each at the same port on its own 127.0.0.1. */
  hostLoopbackPorts: number[];
  /** The one inbound forward: host 127.0.0.1:hostPort to `port` inside. */
  publish?: { hostPort: number; port: number } | undefined;
  /** False: no outbound network beyond hostLoopbackPorts (default true). */
  outbound?: boolean;
}

export function findPasta(): string | undefined {
  for (const dir of TOOL_DIRS) {
    const path = `${dir}/pasta`;
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** The pasta binary, or the error that refuses an egress session without it. */
export function requirePasta(): string {
  const pasta = findPasta();
  if (!pasta) {
    throw new SandboxUnavailableError(
      'pasta (Debian/Ubuntu package passt) was not found: always-on services and orchestrators get their own network through it (docs/sandbox.md)',
    );
  }
  return pasta;
}

/** pasta's options for a sandbox whose first process is `pid` (exported for docs and tests). */
export function pastaArgs(input: {
  asRoot: boolean;
  pid: number;
  pidFile: string;
  plan: NetworkPlan;
}): string[] {
  const { plan } = input;
  const ports = (list: number[]) => (list.length > 0 ? list.join(',') : 'none');
  return [
    // As root pasta would drop to nobody, who may not enter the sandbox's user namespace; uid 0
    // in that namespace has no capabilities on the host, and pasta also seccomp-filters itself
    // and pivots into an empty root.
    ...(input.asRoot ? ['--runas', '0'] : []),
    ...(plan.outbound === false ? [] : ['--config-net']),
    '--no-map-gw',
    '--quiet',
    '--log-file',
    '/dev/null',
    '--pid',
    input.pidFile,
    '--udp-ports',
    'none',
    '--udp-ns',
    'none',
    '--tcp-ns',
    ports(plan.hostLoopbackPorts),
    '--tcp-ports',
    plan.publish ? `127.0.0.1/${plan.publish.hostPort}:${plan.publish.port}` : 'none',
    String(input.pid),
  ];
}

/**
 * Whether pasta's words say it could not bind a `-t` (published) port: "Failed to bind any port
 * for '-t …'" (passt of 2023, Debian 12's) or "Failed to bind port N (…) for option '-t …'" (later
 * ones). `-T`, the host loopback ports mapped in, binds inside the namespace and is not this.
 */
export function publishBindFailed(stderr: string): boolean {
  return /Failed to bind\b[^\n]*'-t /.test(stderr);
}

/** A running pasta for one exec; `close` ends it (idempotent). */
export interface AttachedNetwork {
  close(): Promise<void>;
}

/**
 * Attaches pasta to the network namespace of `pid` (the sandbox's first process, blocked until
 * this resolves). Rejects with a SandboxUnavailableError when pasta cannot configure it.
 */
export async function attachNetwork(input: {
  pastaPath: string;
  asRoot: boolean;
  pid: number;
  runDir: string;
  plan: NetworkPlan;
}): Promise<AttachedNetwork> {
  const pidDir = join(dirname(input.runDir), PASTA_PID_DIR);
  await mkdir(pidDir, { recursive: true, mode: 0o700 });
  const pidFile = join(pidDir, `${basename(input.runDir)}-${input.pid}.pid`);
  const args = pastaArgs({ asRoot: input.asRoot, pid: input.pid, pidFile, plan: input.plan });
  let pid: number | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const launcher = execFile(
        input.pastaPath,
        args,
        { timeout: ATTACH_TIMEOUT_MS, env: {} },
        (err, _stdout, stderr) => {
          if (!err) return resolve();
          const why = stderr
            .split('\n')
            .filter((l) => l.trim() && !l.includes('syslog'))
            .join('; ');
          const message = `pasta could not give the sandbox its network: ${why || err.message}`;
          const taken = input.plan.publish !== undefined && publishBindFailed(why);
          reject(taken ? new PublishPortTakenError(message) : new SandboxUnavailableError(message));
        },
      );
      attaching.set(pidFile, launcher);
    });
    pid = pidIn(pidFile);
    if (pid !== undefined) running.add(pid);
  } finally {
    attaching.delete(pidFile);
  }
  let closed: Promise<void> | undefined;
  return {
    close: () => {
      closed ??= endPasta(pidFile).finally(() => pid !== undefined && running.delete(pid));
      return closed;
    },
  };
}

/**
 * The pasta daemons this process started and has not ended yet. They are not our children (they
 * daemonize), so nothing ends them with us: if this process exits with execs still running (a
 * shutdown that did not wait, an uncaught error), they are killed on the way out. A SIGKILL'd
 * process leaves them to removeStaleRuns at the next start.
 */
const running = new Set<number>();
/**
 * Attaches under way, by the pid file their daemon writes, with pasta's launcher. A platform that
 * stops while a sandbox starts (a service's or a runner's, as a deployment closes) ended that
 * sandbox and exited before the attach settled: the launcher went on to daemonize, or its daemon
 * had written its pid file but was not yet in `running`, and the daemon outlived the platform,
 * holding the namespace, until the next start on that data dir (never, for a removed one). On the
 * way out, the launcher is killed and any daemon it forked is ended with the rest.
 */
const attaching = new Map<string, ChildProcess>();
process.once('exit', () => {
  for (const [pidFile, launcher] of attaching) {
    launcher.kill('SIGKILL');
    // Found by the pid file on their command line, not by the file's content: pasta writes its
    // daemon's pid there only after forking it, and a daemon forked a moment before the kill is
    // not named yet.
    const daemons = pastasNaming(pidFile);
    if (daemons.length === 0) continue;
    for (const daemon of daemons) running.add(daemon);
    try {
      rmSync(pidFile, { force: true });
    } catch {
      // left to the next start's removeStaleRuns; the daemons below are ended all the same
    }
  }
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** The pid a pid file names (read synchronously: the exit handler reads it too), if any. */
function pidIn(pidFile: string): number | undefined {
  let text = '';
  try {
    text = readFileSync(pidFile, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/** The pastas whose command line names `pidFile` (synchronous: the exit handler's). */
function pastasNaming(pidFile: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      if (isPasta(pid) && readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(pidFile))
        found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether `pid` is still a pasta (a pid file's pid may since have been reused). */
function isPasta(pid: number): boolean {
  try {
    return PASTA_COMM.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
  } catch {
    return false;
  }
}

/** Ends the pasta daemon named by a pid file, if that pid is still a pasta, and removes the file. */
async function endPasta(pidFile: string): Promise<void> {
  const pid = pidIn(pidFile);
  if (pid !== undefined && isPasta(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(pidFile, { force: true });
}

/** A crashed platform's pasta daemons, from the pid files in the runs directory's PASTA_PID_DIR. */
export async function endStalePastas(runsDir: string): Promise<number> {
  const dir = join(runsDir, PASTA_PID_DIR);
  const files = await readdir(dir).catch(() => [] as string[]);
  let ended = 0;
  for (const file of files) {
    if (!PIDFILE.test(file)) continue;
    await endPasta(join(dir, file));
    ended++;
  }
  return ended;
}

/**
 * Whether something listens on TCP `port` in the network namespace of `pid` (its /proc view of
 * tcp and tcp6). With a namespace of its own, that is the sandbox's own app and nothing else.
 */
export async function listensInNamespace(pid: number, port: number): Promise<boolean> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${file}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 3 && f[3] === '0A' && f[1]?.endsWith(`:${hex}`)) return true;
    }
  }
  return false;
}
