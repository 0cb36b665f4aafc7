import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { constants, existsSync, lstatSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import {
  chmod,
  type FileHandle,
  lchown,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  rm,
  writeFile,
} from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import {
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxLimits,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';
import { extractBundle } from '../../shared/bundle-archive.ts';
import { SANDBOX_WORK_DIR, SandboxPathError, STDERR_TAIL_BYTES } from '../../shared/sandbox-conventions.ts';
import { type AttachedNetwork, attachNetwork, endStalePastas, requirePasta } from './pasta-network.ts';

/**
 * The local Sandbox adapters.
 *
 * BwrapSandbox runs every command under bubblewrap (`bwrap`), one fresh set of namespaces per
 * exec: user, mount, pid, ipc, uts, cgroup and network are unshared (an `egress` session's
 * namespace gets its network from pasta, pasta-network.ts); the filesystem is a new tmpfs root
 * holding read-only binds of the system directories (/usr, /bin, /sbin, /lib*), a handful of /etc files, the platform's own node binary
 * at /opt/node/bin/node, and the run's working directory read-write at /work. The platform's data
 * directory, the repository and /root are never mounted. Limits are rlimits set by `prlimit`
 * inside the sandbox; the deadline SIGKILLs bwrap, which takes the sandbox's whole pid namespace
 * with it. docs/sandbox.md has the full picture and the measured figures.
 *
 * When the platform runs as root, sandboxed processes must not run as host uid 0: the kernel never
 * applies RLIMIT_NPROC to uid 0, and uid 0 owns most host files. bwrap then creates the user
 * namespace and waits (--userns-block-fd) while this process writes its uid/gid maps: inside uid
 * 0 stays host 0 for bwrap's own setup only, and inside uid 1000 is `hostUid` (65534 by default).
 * The first process in the sandbox is `setpriv`, which switches to 1000 and drops the capability
 * bounding set before anything of the run executes. As an unprivileged user the platform lets bwrap
 * map inside uid 1000 to itself, as bwrap does by default.
 */

/** Where the platform's node binary appears inside the sandbox. */
export const SANDBOX_NODE_DIR = '/opt/node/bin';
/** The uid and gid user code has inside the sandbox. */
const INSIDE_ID = 1000;
/** Address space allowed on top of the memory limit, for reservations runtimes make but never touch (V8: ~1.2 GB at start). */
const ADDRESS_SPACE_HEADROOM = 4 * 1024 * 1024 * 1024;
/** /dev/shm (RAM-backed) is capped at this, or at the disk limit when that is smaller. */
const SHM_BYTES = 64 * 1024 * 1024;
/** How often the working directory's size is measured while a command runs (at least; a slow walk spaces them out). */
const DISK_CHECK_INTERVAL_MS = 100;
/** Files and directories a run may add to its working directory. */
const MAX_NEW_ENTRIES = 100_000;
/** listFiles returns at most this many paths. */
const MAX_LISTED_FILES = 10_000;
/** After a kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 3_000;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

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
}

// ---------------------------------------------------------------------------------------------
// Start-up check

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
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Removes what a previous platform process left in the runs directory (run directories of sessions
 * that were open when it died; their processes died with it through --die-with-parent). Call it at
 * start-up, before any session opens; returns how many it removed.
 */
export async function removeStaleRuns(runsDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(runsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  // Their sandboxes died with the platform; the pasta daemons of egress runs did not.
  await endStalePastas(runsDir);
  for (const entry of entries) await removeTree(join(runsDir, entry));
  return entries.length;
}

// ---------------------------------------------------------------------------------------------
// The adapters

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
  private version: Promise<string> | undefined;

  constructor(options: BwrapSandboxOptions) {
    this.runsDir = resolve(options.runsDir);
    this.bwrapPath = options.bwrapPath ?? findTool('bwrap') ?? 'bwrap';
    this.nodePath = realpathSync(options.nodePath ?? process.execPath);
    this.asRoot = process.getuid?.() === 0;
    this.hostUid = options.hostUid ?? 65534;
    this.hostGid = options.hostGid ?? 65534;
    this.pastaPath = options.pastaPath;
    if (this.asRoot && (this.hostUid === 0 || this.hostGid === 0)) {
      throw new Error('The sandbox host uid and gid must not be 0');
    }
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
    const run = await prepareRun(this.runsDir, spec, owner);
    try {
      await writeIdentityFiles(run.runDir);
    } catch (err) {
      await removeTree(run.runDir);
      throw err;
    }
    return new BwrapSession(spec, run, {
      bwrapPath: this.bwrapPath,
      version,
      nodePath: this.nodePath,
      asRoot: this.asRoot,
      hostUid: this.hostUid,
      hostGid: this.hostGid,
      tools,
      pastaPath,
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

  constructor(options: { runsDir: string }) {
    this.runsDir = resolve(options.runsDir);
  }

  async openSession(spec: SessionSpec): Promise<SandboxSession> {
    const run = await prepareRun(this.runsDir, spec, undefined);
    try {
      await mkdir(join(run.runDir, 'tmp'), { mode: 0o700 });
    } catch (err) {
      await removeTree(run.runDir);
      throw err;
    }
    return new UnisolatedSession(spec, run, findTool('prlimit'));
  }
}

// ---------------------------------------------------------------------------------------------
// Preparing a run's directory

interface Owner {
  uid: number;
  gid: number;
}

interface PreparedRun {
  runDir: string;
  /** The working directory on the host (realpath). */
  work: HostWorkDir;
  /** Bytes and entries in the working directory once the bundle and files are in. */
  baseline: { bytes: number; entries: number };
}

async function prepareRun(
  runsDir: string,
  spec: SessionSpec,
  owner: Owner | undefined,
): Promise<PreparedRun> {
  validateSpec(spec);
  await mkdir(runsDir, { recursive: true, mode: 0o700 });
  const runDir = join(realpathSync(runsDir), spec.runId);
  // Not recursive: a second session with the same run id is refused here.
  await mkdir(runDir, { mode: 0o700 });
  try {
    const workPath = join(runDir, 'work');
    if (spec.bundle) await extractBundle(spec.bundle.data, spec.bundle.format, workPath);
    else await mkdir(workPath, { mode: 0o700 });
    await chmod(workPath, 0o700);
    if (owner) await chownTree(workPath, owner);
    const work = new HostWorkDir(workPath, owner);
    for (const file of spec.files ?? []) await work.writeFile(file.path, file.data);
    const baseline = await work.usage(Number.POSITIVE_INFINITY);
    return { runDir, work, baseline };
  } catch (err) {
    await removeTree(runDir);
    throw err;
  }
}

function validateSpec(spec: SessionSpec): void {
  if (!RUN_ID.test(spec.runId)) {
    throw new Error(`Run id ${JSON.stringify(spec.runId)} is not 1-128 letters, digits, '.', '_' or '-'`);
  }
  for (const [name, value] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(name))
      throw new Error(`Environment variable name ${JSON.stringify(name)} is not valid`);
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new Error(`Environment variable ${name} has a value that cannot be passed to a process`);
    }
  }
  const limits = spec.limits;
  for (const key of ['cpuSeconds', 'memoryBytes', 'processes', 'outputBytes', 'diskBytes'] as const) {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`Sandbox limit ${key} must be a positive integer`);
  }
  if (spec.network !== 'none' && spec.network !== 'egress')
    throw new Error('Sandbox network must be none or egress');
  for (const port of spec.hostLoopbackPorts ?? []) {
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`Host loopback port ${JSON.stringify(port)} is not a TCP port`);
  }
}

/** The identity files the sandbox sees: no host user names, no host name resolution data. */
async function writeIdentityFiles(runDir: string): Promise<void> {
  const etc = join(runDir, 'etc');
  await mkdir(etc, { mode: 0o755 });
  const files: Record<string, string> = {
    passwd: [
      'root:x:0:0:root:/root:/usr/sbin/nologin',
      `sandbox:x:${INSIDE_ID}:${INSIDE_ID}:sandbox:${SANDBOX_WORK_DIR}:/bin/sh`,
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
    ].join('\n'),
    group: ['root:x:0:', `sandbox:x:${INSIDE_ID}:`, 'nogroup:x:65534:'].join('\n'),
    hosts: ['127.0.0.1\tlocalhost', '127.0.1.1\tsandbox', '::1\tlocalhost ip6-localhost ip6-loopback'].join(
      '\n',
    ),
    'nsswitch.conf': [
      'passwd: files',
      'group: files',
      'shadow: files',
      'hosts: files dns',
      'networks: files',
      'protocols: files',
      'services: files',
    ].join('\n'),
  };
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(etc, name), `${content}\n`, { mode: 0o644, flag: 'wx' });
  }
}

async function chownTree(path: string, owner: Owner): Promise<void> {
  const stat = await lstat(path);
  // lchown: a symlink of the bundle is changed itself, never what it points to.
  await lchown(path, owner.uid, owner.gid);
  if (stat.isDirectory()) {
    for (const entry of await readdir(path)) await chownTree(join(path, entry), owner);
  }
}

/** Removes a run directory even when the run left directories without write permission. */
async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch {
    await makeWritable(path).catch(() => {});
  }
  await rm(path, { recursive: true, force: true });
}

async function makeWritable(path: string): Promise<void> {
  const stat = await lstat(path);
  if (!stat.isDirectory()) return;
  await chmod(path, 0o700);
  for (const entry of await readdir(path)) await makeWritable(join(path, entry)).catch(() => {});
}

// ---------------------------------------------------------------------------------------------
// Host-side access to the working directory

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** `name` inside the directory open as `fd`: resolved from that directory, never from a path. */
const inDir = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

/** A relative path's segments; refuses absolute paths, '..', NUL. */
function segmentsOf(path: string, allowRoot: boolean): string[] {
  if (typeof path !== 'string' || path.includes('\0'))
    throw new SandboxPathError('The path is not a string without NUL');
  if (path.startsWith('/'))
    throw new SandboxPathError(
      `${JSON.stringify(path)} is absolute; give a path relative to the working directory`,
    );
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new SandboxPathError(`${JSON.stringify(path)} has a '..' segment`);
  if (!allowRoot && segments.length === 0)
    throw new SandboxPathError(`${JSON.stringify(path)} names no file`);
  return segments;
}

/**
 * The working directory seen from the host. The run's code can change it at any moment (while an
 * exec runs, or by leaving symlinks behind), so every access walks down from an open descriptor of
 * the root, one component at a time with O_NOFOLLOW, through /proc/self/fd/N/<name>: a symlink or
 * a swapped directory anywhere on the way is refused, never followed out of the tree.
 */
class HostWorkDir {
  readonly path: string;
  private readonly owner: Owner | undefined;

  constructor(path: string, owner: Owner | undefined) {
    this.path = realpathSync(path);
    this.owner = owner;
  }

  /** Opens the directory at `segments` (created when `create`), refusing links and non-directories. */
  private async openDir(segments: string[], create: boolean): Promise<FileHandle> {
    let current = await open(this.path, DIR_FLAGS);
    try {
      for (const segment of segments) {
        let next: FileHandle;
        try {
          next = await open(inDir(current.fd, segment), DIR_FLAGS);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' && create) {
            await mkdir(inDir(current.fd, segment), { mode: 0o755 }).catch((e: NodeJS.ErrnoException) => {
              if (e.code !== 'EEXIST') throw e;
            });
            next = await open(inDir(current.fd, segment), DIR_FLAGS).catch((e: NodeJS.ErrnoException) => {
              throw refusal(e, segment);
            });
            if (this.owner) await next.chown(this.owner.uid, this.owner.gid);
          } else {
            throw refusal(err as NodeJS.ErrnoException, segment);
          }
        }
        await current.close();
        current = next;
      }
      return current;
    } catch (err) {
      await current.close();
      throw err;
    }
  }

  async readFile(path: string): Promise<Buffer> {
    const segments = segmentsOf(path, false);
    const dir = await this.openDir(segments.slice(0, -1), false);
    let file: FileHandle;
    try {
      file = await open(
        inDir(dir.fd, segments.at(-1)!),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      ).catch((e: NodeJS.ErrnoException) => {
        throw refusal(e, path);
      });
    } finally {
      await dir.close();
    }
    try {
      if (!(await file.stat()).isFile())
        throw new SandboxPathError(`${JSON.stringify(path)} is not a regular file`);
      return await file.readFile();
    } finally {
      await file.close();
    }
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    const segments = segmentsOf(path, false);
    const dir = await this.openDir(segments.slice(0, -1), true);
    let file: FileHandle;
    try {
      file = await open(
        inDir(dir.fd, segments.at(-1)!),
        constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        0o644,
      ).catch((e: NodeJS.ErrnoException) => {
        throw refusal(e, path);
      });
    } finally {
      await dir.close();
    }
    try {
      if (!(await file.stat()).isFile())
        throw new SandboxPathError(`${JSON.stringify(path)} is not a regular file`);
      await file.truncate(0);
      await file.writeFile(data);
      if (this.owner) await file.chown(this.owner.uid, this.owner.gid);
    } finally {
      await file.close();
    }
  }

  /** Regular files under `path`, relative to the working directory, sorted; links are not followed. */
  async listFiles(path = ''): Promise<string[]> {
    const segments = segmentsOf(path, true);
    const start = await this.openDir(segments, false);
    const found: string[] = [];
    const walk = async (dir: FileHandle, prefix: string): Promise<void> => {
      for (const entry of await readdir(inDir(dir.fd, ''), { withFileTypes: true })) {
        if (found.length >= MAX_LISTED_FILES) return;
        const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isFile()) found.push(rel);
        else if (entry.isDirectory()) {
          const child = await open(inDir(dir.fd, entry.name), DIR_FLAGS).catch(() => undefined);
          if (!child) continue;
          try {
            await walk(child, rel);
          } finally {
            await child.close();
          }
        }
      }
    };
    try {
      await walk(start, segments.join('/'));
    } finally {
      await start.close();
    }
    return found.sort();
  }

  /** Bytes allocated and entries in the tree; stops counting entries past `maxEntries`. */
  async usage(maxEntries: number): Promise<{ bytes: number; entries: number }> {
    let bytes = 0;
    let entries = 0;
    const walk = async (dir: FileHandle): Promise<void> => {
      for (const name of await readdir(inDir(dir.fd, ''))) {
        if (++entries > maxEntries) return;
        const stat = await lstat(inDir(dir.fd, name)).catch(() => undefined);
        if (!stat) continue;
        bytes += stat.blocks * 512;
        if (stat.isDirectory()) {
          const child = await open(inDir(dir.fd, name), DIR_FLAGS).catch(() => undefined);
          if (!child) continue;
          try {
            await walk(child);
          } finally {
            await child.close();
          }
        }
      }
    };
    const root = await open(this.path, DIR_FLAGS);
    try {
      await walk(root);
    } finally {
      await root.close();
    }
    return { bytes, entries };
  }
}

function refusal(err: NodeJS.ErrnoException, what: string): Error {
  if (err.code === 'ELOOP' || err.code === 'ENOTDIR' || err.code === 'EMLINK') {
    return new SandboxPathError(
      `${JSON.stringify(what)} is a link or passes through something that is not a directory`,
    );
  }
  return err;
}

// ---------------------------------------------------------------------------------------------
// Running a command

interface Running {
  kill(): void;
  done: Promise<unknown>;
}

/** Bookkeeping shared by both session kinds: the file API, running execs, close(). */
class BaseSession {
  readonly spec: SessionSpec;
  protected readonly run: PreparedRun;
  protected readonly running = new Set<Running>();
  protected closed = false;
  private closing: Promise<void> | undefined;

  constructor(spec: SessionSpec, run: PreparedRun) {
    this.spec = spec;
    this.run = run;
  }

  // async: a closed session's refusal is a rejected promise, as the port's callers expect.
  async readFile(path: string): Promise<Buffer> {
    this.assertOpen();
    return this.run.work.readFile(path);
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    this.assertOpen();
    return this.run.work.writeFile(path, data);
  }

  async listFiles(path?: string): Promise<string[]> {
    this.assertOpen();
    return this.run.work.listFiles(path);
  }

  /** Ends the session once; every call, the second included, resolves when the clean-up is done. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      for (const r of this.running) r.kill();
      await Promise.allSettled([...this.running].map((r) => r.done));
      await removeTree(this.run.runDir);
    })();
    return this.closing;
  }

  /** For superviseChild: registers a running exec until it settles. */
  track(r: Running): () => void {
    this.running.add(r);
    return () => this.running.delete(r);
  }

  diskCheck(): { work: HostWorkDir; maxBytes: number; maxEntries: number } {
    return {
      work: this.run.work,
      maxBytes: this.run.baseline.bytes + this.spec.limits.diskBytes,
      maxEntries: this.run.baseline.entries + MAX_NEW_ENTRIES,
    };
  }

  protected assertOpen(): void {
    if (this.closed) throw new Error(`Sandbox session ${this.spec.runId} is closed`);
  }

  /** When this exec must end: the session's deadline or the exec's own timeout, whichever is first. */
  protected deadlineOf(timeoutMs: number | undefined, now: number): number {
    return Math.min(
      this.spec.deadlineMs,
      timeoutMs === undefined ? Number.POSITIVE_INFINITY : now + timeoutMs,
    );
  }
}

interface SessionTools {
  bwrapPath: string;
  version: string;
  nodePath: string;
  asRoot: boolean;
  hostUid: number;
  hostGid: number;
  tools: { prlimit: string; setpriv?: string; bash?: string };
  /** pasta, for egress sessions (pasta-network.ts). */
  pastaPath: string | undefined;
}

class BwrapSession extends BaseSession implements SandboxSession {
  readonly workDir = SANDBOX_WORK_DIR;
  private readonly t: SessionTools;

  constructor(spec: SessionSpec, run: PreparedRun, tools: SessionTools) {
    super(spec, run);
    this.t = tools;
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    const started = Date.now();
    const deadline = this.deadlineOf(options.timeoutMs, started);
    if (deadline <= started || options.signal?.aborted) return notRun(deadline <= started);
    const t = this.t;
    const egress = this.spec.network === 'egress';
    if (options.publish && !egress) throw new Error('publish needs a session with network egress');
    const args = bwrapArgs({
      version: t.version,
      asRoot: t.asRoot,
      network: this.spec.network,
      limits: this.spec.limits,
      env: this.spec.env,
      work: this.run.work.path,
      identityDir: join(this.run.runDir, 'etc'),
      nodePath: t.nodePath,
    });
    const inner = innerCommand({ asRoot: t.asRoot, limits: this.spec.limits, tools: t.tools, command });
    // fd 3: bwrap's options (NUL-separated, so secrets in --setenv never show in `ps`); fd 4: its
    // info (the sandbox's pid); fd 5 (as root): the user-namespace block; fd 6: the "started"
    // marker; fd 7 (egress): the block held until pasta has configured the sandbox's network.
    const wantsInfo = t.asRoot || egress;
    const child = spawn(t.bwrapPath, ['--args', '3', '--', ...inner], {
      stdio: [
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        wantsInfo ? 'pipe' : 'ignore',
        t.asRoot ? 'pipe' : 'ignore',
        'pipe',
        egress ? 'pipe' : 'ignore',
      ],
      env: {},
    });
    const argsPipe = child.stdio[3] as Writable;
    argsPipe.on('error', () => {});
    argsPipe.end(Buffer.from(`${args.join('\0')}\0`));
    let setupFailure: Error | undefined;
    let network: AttachedNetwork | undefined;
    let ended = false;
    /** The sandbox's first process (pid 1 of its pid namespace), once bwrap has said which. */
    let sandboxPid: number | undefined;
    // bwrap and the sandbox's first process: the latter may still wait on a block fd (the id maps,
    // the network), and killing it takes its whole pid namespace with it.
    const killAll = () => {
      // Only while bwrap runs: once it has exited, that pid may belong to someone else.
      if (sandboxPid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(sandboxPid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      child.kill('SIGKILL');
    };
    const pipes = child.stdio as unknown as (Readable | Writable | null)[];
    const pipe = (fd: number) => {
      const p = pipes[fd];
      p?.on('error', () => {});
      return p;
    };
    const userBlock = pipe(5) as Writable | null;
    const netBlock = pipe(7) as Writable | null;
    // Up to the command: the id maps (as root), then the network (egress), each released in turn.
    const prepare = async (pid: number) => {
      if (t.asRoot) {
        writeIdMaps(pid, t.hostUid, t.hostGid);
        userBlock?.end('x');
      }
      if (egress) {
        network = await attachNetwork({
          pastaPath: t.pastaPath!,
          asRoot: t.asRoot,
          pid,
          runDir: this.run.runDir,
          plan: { hostLoopbackPorts: this.spec.hostLoopbackPorts ?? [], publish: options.publish },
        });
        // Killed while pasta was attaching: nothing will close it later.
        if (ended) return void (await network.close());
        netBlock?.end('x');
      }
      options.onSpawn?.(pid);
    };
    if (wantsInfo) {
      const info = pipe(4) as Readable;
      let text = '';
      let seen = false;
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
        if (!pid || seen) return;
        seen = true;
        sandboxPid = Number(pid);
        prepare(sandboxPid).catch((err: Error) => {
          setupFailure = err;
          // The sandbox's first process still waits on its block fds, holding the output pipes.
          killAll();
        });
      });
    }
    const supervised = { ...options, onSpawn: wantsInfo ? undefined : options.onSpawn };
    try {
      return await superviseChild(this, child, supervised, started, deadline, killAll, 6);
    } catch (err) {
      if (!setupFailure) throw err;
      if (setupFailure instanceof SandboxUnavailableError) throw setupFailure;
      throw new SandboxUnavailableError(
        `Could not map the sandbox's user namespace: ${setupFailure.message}`,
      );
    } finally {
      ended = true;
      await (network as AttachedNetwork | undefined)?.close();
    }
  }
}

class UnisolatedSession extends BaseSession implements SandboxSession {
  readonly workDir: string;
  private readonly prlimit: string | undefined;

  constructor(spec: SessionSpec, run: PreparedRun, prlimit: string | undefined) {
    super(spec, run);
    this.workDir = run.work.path;
    this.prlimit = prlimit;
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    const started = Date.now();
    const deadline = this.deadlineOf(options.timeoutMs, started);
    if (deadline <= started || options.signal?.aborted) return notRun(deadline <= started);
    const limits = this.prlimit ? [this.prlimit, ...rlimitArgs(this.spec.limits, false), '--'] : [];
    const argv = [...limits, '/bin/sh', '-c', command];
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: this.workDir,
      env: {
        PATH: `${dirname(realpathSync(process.execPath))}:/usr/local/bin:/usr/bin:/bin`,
        HOME: this.workDir,
        LANG: 'C.UTF-8',
        TMPDIR: join(this.run.runDir, 'tmp'),
        ...this.spec.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const killTree = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    return superviseChild(this, child, options, started, deadline, killTree, undefined);
  }
}

interface Supervisable {
  spec: SessionSpec;
  track(r: Running): () => void;
  diskCheck(): { work: HostWorkDir; maxBytes: number; maxEntries: number };
}

function notRun(timedOut: boolean): ExecResult {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stderrTail: timedOut ? 'not started: the deadline had already passed' : 'not started: aborted',
    timedOut,
    stdoutTruncated: false,
    durationMs: 0,
  };
}

function superviseChild(
  session: Supervisable,
  child: ChildProcess,
  options: ExecOptions,
  started: number,
  deadline: number,
  killTree: () => void,
  markerFd: number | undefined,
): Promise<ExecResult> {
  const { outputBytes } = session.spec.limits;
  const stdoutChunks: Buffer[] = [];
  let stdoutBytes = 0;
  let stdoutTruncated = false;
  let stderrTail = Buffer.alloc(0);
  let timedOut = false;
  let killed = false;
  let note = '';
  let startedInside = markerFd === undefined;

  const kill = () => {
    if (killed) return;
    killed = true;
    killTree();
    // A process stuck in the kernel can keep a pipe open; do not wait for it forever.
    setTimeout(() => {
      for (const s of child.stdio) s?.destroy();
    }, KILL_GRACE_MS).unref();
  };

  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  child.stdout!.on('data', (chunk: Buffer) => {
    options.onOutput?.('stdout', chunk);
    const room = outputBytes - stdoutBytes;
    if (chunk.length <= room) {
      stdoutChunks.push(chunk);
      stdoutBytes += chunk.length;
    } else {
      if (room > 0) {
        stdoutChunks.push(chunk.subarray(0, room));
        stdoutBytes += room;
      }
      // Keep reading (so the command never blocks on a full pipe) and drop the rest.
      stdoutTruncated = true;
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    options.onOutput?.('stderr', chunk);
    stderrTail = Buffer.concat([stderrTail, chunk]);
    if (stderrTail.length > STDERR_TAIL_BYTES)
      stderrTail = stderrTail.subarray(stderrTail.length - STDERR_TAIL_BYTES);
  });
  if (markerFd !== undefined) {
    const marker = child.stdio[markerFd] as Readable;
    marker.on('data', () => {
      startedInside = true;
    });
    marker.on('error', () => {});
  }
  const stdin = child.stdin!;
  stdin.on('error', () => {}); // EPIPE when the command does not read its input
  stdin.end(options.stdin ?? '');

  const timer = setTimeout(
    () => {
      timedOut = true;
      kill();
    },
    Math.min(Math.max(0, deadline - Date.now()), 2 ** 31 - 1),
  );
  const onAbort = () => kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // The disk limit: RLIMIT_FSIZE caps each file; this caps the working directory as a whole.
  const disk = session.diskCheck();
  let diskTimer: NodeJS.Timeout | undefined;
  let finished = false;
  let nextCheck = DISK_CHECK_INTERVAL_MS;
  const checkDisk = async () => {
    if (finished || killed) return;
    try {
      const walkStarted = Date.now();
      const usage = await disk.work.usage(disk.maxEntries);
      nextCheck = Math.max(DISK_CHECK_INTERVAL_MS, 4 * (Date.now() - walkStarted));
      if (!finished && !killed && (usage.bytes > disk.maxBytes || usage.entries > disk.maxEntries)) {
        note =
          usage.entries > disk.maxEntries
            ? `[sandbox] killed: more than ${MAX_NEW_ENTRIES} new files in the working directory`
            : `[sandbox] killed: the working directory grew past the disk limit of ${session.spec.limits.diskBytes} bytes`;
        kill();
        return;
      }
    } catch {
      // The tree changed under the walk; measure again next time.
    }
    if (!finished && !killed) diskTimer = setTimeout(checkDisk, nextCheck);
  };
  diskTimer = setTimeout(checkDisk, DISK_CHECK_INTERVAL_MS);

  let settle!: () => void;
  const done = new Promise<void>((r) => {
    settle = r;
  });
  const untrack = session.track({ kill, done });

  return new Promise<ExecResult>((resolvePromise, rejectPromise) => {
    let spawnError: Error | undefined;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('exit', () => {
      // Unisolated: whatever the command left in its process group goes with it.
      if (markerFd === undefined) killTree();
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      finished = true;
      clearTimeout(timer);
      clearTimeout(diskTimer);
      options.signal?.removeEventListener('abort', onAbort);
      untrack();
      settle();
      const durationMs = Date.now() - started;
      let tail = stderrTail.toString('utf8');
      if (note)
        tail = `${tail}${tail && !tail.endsWith('\n') ? '\n' : ''}${note}\n`.slice(-STDERR_TAIL_BYTES);
      if (spawnError) {
        rejectPromise(new SandboxUnavailableError(`The sandbox could not be started: ${spawnError.message}`));
        return;
      }
      if (!startedInside && !killed) {
        rejectPromise(
          new SandboxUnavailableError(
            `bubblewrap could not set up the sandbox (exit ${code ?? signal}): ${tail.trim().slice(-2000)}`,
          ),
        );
        return;
      }
      let exitCode = code;
      let sig: string | null = signal;
      if (sig === null && code !== null && code > 128 && code <= 128 + 64) {
        // A signal inside the sandbox reaches us as 128+n (bwrap and the shell both report it so).
        const name = signalName(code - 128);
        if (name) {
          sig = name;
          exitCode = null;
        }
      } else if (sig !== null) {
        exitCode = null;
      }
      resolvePromise({
        exitCode,
        signal: sig,
        stdout: Buffer.concat(stdoutChunks).toString('utf8'),
        stderrTail: tail,
        timedOut,
        stdoutTruncated,
        durationMs,
      });
    });
  });
}

function signalName(n: number): string | undefined {
  for (const [name, value] of Object.entries(osConstants.signals)) if (value === n) return name;
  return undefined;
}

/** As root: inside uid/gid 0 stays host 0 (bwrap's setup), inside 1000 is the unprivileged host id. */
function writeIdMaps(pid: number, hostUid: number, hostGid: number): void {
  writeFileSync(`/proc/${pid}/uid_map`, `0 0 1\n${INSIDE_ID} ${hostUid} 1\n`);
  writeFileSync(`/proc/${pid}/gid_map`, `0 0 1\n${INSIDE_ID} ${hostGid} 1\n`);
}

// ---------------------------------------------------------------------------------------------
// The argument lists

/** The rlimits, as prlimit options. */
function rlimitArgs(limits: SandboxLimits, processLimit: boolean, processOffset = 0): string[] {
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
function innerCommand(input: {
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

/** Host directories mirrored into the sandbox: symlinks (merged /usr) as symlinks, directories read-only. */
function systemDirArgs(): string[] {
  const args: string[] = ['--ro-bind', '/usr', '/usr'];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

/** /etc files every run gets (read-only, when present): the loader, alternatives, CA certificates. */
const ETC_ALWAYS = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki/ca-trust',
  '/etc/pki/tls/certs',
  '/etc/pki/tls/cert.pem',
  '/etc/pki/tls/openssl.cnf',
  '/etc/crypto-policies',
  '/etc/services',
  '/etc/protocols',
  '/etc/mime.types',
];
/** Only with network egress: name resolution. */
const ETC_EGRESS = ['/etc/resolv.conf', '/etc/gai.conf', '/etc/host.conf'];

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
    // The parent writes the id maps (see the module comment); bwrap waits for them.
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
    // without devpts (devNodeArgs).
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

  args.push(...systemDirArgs());
  const made = new Set<string>(['/']);
  const ensureParents = (dest: string) => {
    const parts = dest.split('/').filter(Boolean).slice(0, -1);
    let current = '';
    for (const part of parts) {
      current += `/${part}`;
      if (made.has(current)) continue;
      made.add(current);
      args.push('--perms', '0755', '--dir', current);
    }
  };
  for (const path of [...ETC_ALWAYS, ...(input.network === 'egress' ? ETC_EGRESS : [])]) {
    if (!existsSync(path)) continue;
    ensureParents(path);
    args.push('--ro-bind-try', path, path);
  }
  for (const name of ['passwd', 'group', 'hosts', 'nsswitch.conf']) {
    ensureParents(`/etc/${name}`);
    args.push('--ro-bind', join(input.identityDir, name), `/etc/${name}`);
  }
  ensureParents(`${SANDBOX_NODE_DIR}/node`);
  args.push('--ro-bind', input.nodePath, `${SANDBOX_NODE_DIR}/node`);

  const nested = !input.asRoot && input.network === 'egress';
  args.push('--proc', '/proc', ...(nested ? devNodeArgs() : ['--dev', '/dev']));
  const sized = (bytes: number) => (atLeast('0.7.0') ? ['--size', String(bytes)] : []);
  args.push('--perms', '1777', ...sized(Math.min(SHM_BYTES, input.limits.diskBytes)), '--tmpfs', '/dev/shm');
  args.push('--remount-ro', '/dev');
  args.push('--perms', '1777', ...sized(input.limits.diskBytes), '--tmpfs', '/tmp');
  args.push('--bind', input.work, SANDBOX_WORK_DIR);
  // As root, bwrap itself (uid 0 inside, without CAP_DAC_OVERRIDE) cannot enter the 0700 working
  // directory of uid 1000; the init script changes into it once it runs as 1000.
  if (!input.asRoot) args.push('--chdir', SANDBOX_WORK_DIR);
  args.push('--remount-ro', '/');
  return args;
}

/** /dev as bwrap's --dev makes it, without devpts (no pseudo-terminals; nothing here needs them). */
function devNodeArgs(): string[] {
  const args = ['--perms', '0755', '--tmpfs', '/dev'];
  for (const node of ['null', 'zero', 'full', 'random', 'urandom', 'tty'])
    args.push('--dev-bind', `/dev/${node}`, `/dev/${node}`);
  args.push('--symlink', '/proc/self/fd', '/dev/fd');
  for (const [i, name] of ['stdin', 'stdout', 'stderr'].entries())
    args.push('--symlink', `/proc/self/fd/${i}`, `/dev/${name}`);
  return args;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Tools

function findTool(name: string): string | undefined {
  for (const dir of TOOL_DIRS) {
    const path = `${dir}/${name}`;
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** The helpers the sandbox runs (found on the host; /usr, /bin and /sbin are the same inside). */
function requiredTools(asRoot: boolean): { prlimit: string; setpriv?: string; bash?: string } {
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

function bwrapVersion(bwrapPath: string): Promise<string> {
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
