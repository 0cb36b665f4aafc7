/**
 * The local Sandbox adapters: BwrapSandbox, the default, and UnisolatedSandbox, the opt-out without
 * isolation. This folder holds what they are made of; functions/platform/deps.ts picks one.
 *
 * BwrapSandbox runs every command under bubblewrap (`bwrap`), one fresh set of namespaces per
 * exec: user, mount, pid, ipc, uts, cgroup and network are unshared (an `egress` session's
 * namespace gets its network from pasta, pasta-network.ts); the filesystem is a new tmpfs root
 * holding read-only binds of the system directories (/usr, /bin, /sbin, /lib*), a handful of /etc files, the platform's own node binary
 * at /opt/node/bin/node, and the run's working directory read-write at /work. The platform's data
 * directory, the repository and /root are never mounted. Limits are rlimits set inside the
 * sandbox (inner-command.ts); the deadline SIGKILLs bwrap, which takes the sandbox's whole pid
 * namespace with it. bwrap is forked by the spawner process (spawner.ts), never by the platform,
 * and bundles are extracted once (extracted-bundles.ts). docs/sandbox.md has the full picture and
 * the measured figures.
 *
 * When the platform runs as root, sandboxed processes must not run as host uid 0: the kernel never
 * applies RLIMIT_NPROC to uid 0, and uid 0 owns most host files. bwrap then creates the user
 * namespace and waits (--userns-block-fd) while this process writes its uid/gid maps: inside uid
 * 0 stays host 0 for bwrap's own setup only, and inside uid 1000 is `hostUid` (65534 by default).
 * The first process in the sandbox is `setpriv`, which switches to 1000 and drops the capability
 * bounding set before anything of the run executes. As an unprivileged user the platform lets bwrap
 * map inside uid 1000 to itself, as bwrap does by default.
 */
import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type Sandbox,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../../ports/sandbox.ts';
import { requirePasta } from '../pasta-network.ts';
import { BwrapSession } from './bwrap-session.ts';
import { ExtractedBundles } from './extracted-bundles.ts';
import { bwrapVersion, findTool, requiredTools } from './host-tools.ts';
import { prepareRun, removeTree } from './run-dir.ts';
import { ensureIdentityFiles } from './sandbox-user.ts';
import { Spawner } from './spawner.ts';
import { UnisolatedSession } from './unisolated-session.ts';

export interface BwrapSandboxOptions {
  /** Parent of every run's directory, e.g. `<dataDir>/runs`; created 0700 if missing. */
  runsDir: string;
  /** The bwrap binary (default: `bwrap` from a system directory). */
  bwrapPath?: string;
  /** Host uid/gid the sandbox's processes run as when the platform runs as root (default 65534). */
  hostUid?: number;
  hostGid?: number;
  /** The node binary bound read-only at /opt/node/bin/node (default: the platform's own). */
  nodePath?: string;
  /** pasta, for egress sessions (default: `pasta` from a system directory). */
  pastaPath?: string;
  /**
   * Whether egress sessions may open connections beyond their `hostLoopbackPorts` (default true).
   * False for the emulated ECS sandbox: its Fargate counterpart reaches S3 and nothing else.
   */
  outbound?: boolean;
  /**
   * Who forks the sandboxes' processes: `process` (the default), a small spawner process
   * (spawner.ts), so that forking never stalls the platform's event loop; `in-process`, the
   * platform itself (for the bench's comparison, and where a bundled copy of this adapter has no
   * spawner program beside it).
   */
  spawner?: 'process' | 'in-process';
}

/** Runs each command under bubblewrap; see the module comment and docs/sandbox.md. */
export class BwrapSandbox implements Sandbox {
  readonly kind = 'bubblewrap' as const;
  readonly egress = true;
  /** Egress sessions get a network namespace of their own, attached to pasta (pasta-network.ts). */
  readonly ownNetwork = true;
  private readonly runsDir: string;
  private readonly bwrapPath: string;
  private readonly nodePath: string;
  private readonly asRoot: boolean;
  private readonly hostUid: number;
  private readonly hostGid: number;
  private readonly pastaPath: string | undefined;
  private readonly outbound: boolean;
  private version: Promise<string> | undefined;
  /** Forks bwrap for every session of this sandbox; undefined: this process does. */
  readonly spawner: Spawner | undefined;
  /** Bundles extracted once, copied into each run. */
  readonly bundles: ExtractedBundles;

  constructor(options: BwrapSandboxOptions) {
    this.spawner = options.spawner === 'in-process' || !Spawner.available() ? undefined : new Spawner();
    this.runsDir = resolve(options.runsDir);
    this.bundles = new ExtractedBundles(this.runsDir);
    this.bwrapPath = options.bwrapPath ?? findTool('bwrap') ?? 'bwrap';
    this.nodePath = realpathSync(options.nodePath ?? process.execPath);
    this.asRoot = process.getuid?.() === 0;
    this.hostUid = options.hostUid ?? 65534;
    this.hostGid = options.hostGid ?? 65534;
    this.pastaPath = options.pastaPath;
    this.outbound = options.outbound ?? true;
    if (this.asRoot && (this.hostUid === 0 || this.hostGid === 0)) {
      throw new Error('The sandbox host uid and gid must not be 0');
    }
  }

  /**
   * Ends the spawner, and with it every sandbox it forked (bwrap --die-with-parent): what a
   * stopped platform's process ending does, for a platform stopped inside a process that goes on
   * (a test's). The next session forks a new spawner.
   */
  async close(): Promise<void> {
    this.spawner?.stop();
  }

  async openSession(spec: SessionSpec): Promise<SandboxSession> {
    this.version ??= bwrapVersion(this.bwrapPath).catch((err: Error) => {
      this.version = undefined;
      throw new SandboxUnavailableError(`bubblewrap cannot run (${this.bwrapPath}): ${err.message}`);
    });
    const version = await this.version;
    const tools = requiredTools(this.asRoot);
    // Without pasta an egress session would have no network at all: refused before anything runs.
    const pastaPath = spec.network === 'egress' ? (this.pastaPath ?? requirePasta()) : undefined;
    const owner = this.asRoot ? { uid: this.hostUid, gid: this.hostGid } : undefined;
    const identityDir = join(this.runsDir, '.identity');
    await mkdir(this.runsDir, { recursive: true, mode: 0o700 });
    await ensureIdentityFiles(identityDir);
    const run = await prepareRun(this.runsDir, spec, owner, this.bundles.place);
    return new BwrapSession(spec, run, {
      identityDir,
      bwrapPath: this.bwrapPath,
      version,
      nodePath: this.nodePath,
      asRoot: this.asRoot,
      hostUid: this.hostUid,
      hostGid: this.hostGid,
      tools,
      pastaPath,
      outbound: this.outbound,
      spawner: this.spawner,
    });
  }
}

/**
 * NO ISOLATION. Runs each command as a plain child process of the platform (`/bin/sh -c`, its own
 * process group) in the run's working directory on the host: the command runs as the platform's
 * user and can read and write everything the platform can (the data directory with the vault key
 * and every workspace's bundles included), see and signal its processes, and use the network.
 * Only the CPU, memory and file-size rlimits, the output caps and the deadline apply (no process
 * limit: RLIMIT_NPROC would count the platform's own processes). For operators who run only their
 * own trusted agents and explicitly opt out (PLATFORM_SANDBOX=unisolated); never the default.
 */
export class UnisolatedSandbox implements Sandbox {
  readonly kind = 'unisolated' as const;
  readonly egress = true;
  /** Commands share the host's network: an app's port is a host port. */
  readonly ownNetwork = false;
  private readonly runsDir: string;
  /** Forks every command (see BwrapSandboxOptions.spawner); undefined: this process does. */
  readonly spawner: Spawner | undefined;

  /** Bundles extracted once, copied into each run. */
  readonly bundles: ExtractedBundles;

  constructor(options: { runsDir: string; spawner?: 'process' | 'in-process' }) {
    this.runsDir = resolve(options.runsDir);
    this.bundles = new ExtractedBundles(this.runsDir);
    this.spawner = options.spawner === 'in-process' || !Spawner.available() ? undefined : new Spawner();
  }

  async openSession(spec: SessionSpec): Promise<SandboxSession> {
    const run = await prepareRun(this.runsDir, spec, undefined, this.bundles.place);
    try {
      await mkdir(join(run.runDir, 'tmp'), { mode: 0o700 });
    } catch (err) {
      await removeTree(run.runDir);
      throw err;
    }
    return new UnisolatedSession(spec, run, findTool('prlimit'), this.spawner);
  }
}
