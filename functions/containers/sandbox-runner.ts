import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { extractBundle } from '../shared/bundle-archive/extract.ts';
import { STDERR_TAIL_BYTES } from '../shared/sandbox-conventions.ts';
import {
  type ExecCommand,
  type PoolManifest,
  RUNNER_DEADLINE_MARGIN_MS,
  type RunManifest,
  type RunResult,
  SANDBOX_RUN_UID,
} from './sandbox-protocol.ts';
import { servePool } from './warm-runner.ts';

/**
 * The ECS sandbox's runner: what runs in a sandbox task (docs/sandbox-aws.md), loaded and started
 * by the task's RUNNER_BOOTSTRAP with the run manifest. Bundled by esbuild into one CommonJS file
 * (lib/container-programs.ts) that travels with each run.
 *
 * It downloads the bundle (unpacked with the same code as the local sandbox: extractBundle) and
 * the files into the working directory and, when it runs as root, hands the directory to
 * SANDBOX_RUN_UID. Then it polls for command n = 1, 2, ... through the manifest's presigned GET
 * URLs (404 or 403: not yet; command 1 may come in the manifest itself), runs each as that user,
 * so the command can neither read the runner's environment or memory (the manifest and every URL
 * stay there, never in a file or the command's env) nor stop it, and PUTs the result through
 * command n's presigned PUT URL; `{ stop: true }`, a command marked last, or the deadline ends it. Limits per command: RLIMIT_CPU, RLIMIT_FSIZE and (as
 * root) RLIMIT_NPROC through the shell's ulimit, stdout capped, the last 8 KiB of stderr kept, the
 * process group killed at the command's killAtMs and at the latest RUNNER_DEADLINE_MARGIN_MS
 * before the deadline. A failure before the first command (download, archive) is reported as the
 * first command's result. Its own log lines (the task's log group) never hold the command's output
 * or inputs. test/adapters/ecs-sandbox-runner.test.ts runs it against a loopback S3 stand-in.
 */

const PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The limits through the shell's ulimit, then the command: `sh -c WRAP sandbox <cpu> <blocks> <nproc> <command>`. */
const WRAP =
  'ulimit -t "$1" && ulimit -f "$2" && { [ -z "$3" ] || ulimit -u "$3" 2>/dev/null || ulimit -p "$3"; } && exec /bin/sh -c "$4"';

let child: ChildProcess | undefined;

const log = (msg: string, extra: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ time: new Date().toISOString(), msg, ...extra }));

const message = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 1000);

const wait = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`download failed with HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

async function upload(url: string, body: string): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 4; i++) {
    try {
      const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/json' } });
      if (res.ok) return;
      last = new Error(`result upload failed with HTTP ${res.status}`);
    } catch (err) {
      last = err;
    }
    await wait(250 * (i + 1));
  }
  throw last;
}

/** A file's place under the working directory; anything that could leave it is refused. */
function inside(root: string, rel: string): string {
  if (typeof rel !== 'string' || rel.includes('\0') || rel.includes('\\') || rel.startsWith('/')) {
    throw new Error(`refused path ${JSON.stringify(rel)}`);
  }
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`refused path ${JSON.stringify(rel)}`);
  return join(root, ...parts);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

async function setup(m: RunManifest): Promise<void> {
  const root = m.workDir;
  const [bundle, files] = await Promise.all([
    m.bundle ? download(m.bundle.url) : null,
    Promise.all(m.files.map(async (f) => [inside(root, f.path), await download(f.url)] as const)),
  ]);
  // Read where the bundle store keeps it, the bundle may have been replaced since the run began
  // (a new upload to the same version): the run gets the code it was started with, or fails.
  if (bundle && m.bundle?.sha256 && createHash('sha256').update(bundle).digest('hex') !== m.bundle.sha256) {
    throw new Error("the agent's bundle was replaced after this run began; run it again");
  }
  if (bundle && m.bundle) await extractBundle(bundle, m.bundle.format, root);
  else mkdirSync(root, { recursive: true });
  chmodSync(root, 0o755);
  for (const [target, data] of files) {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, data);
  }
  if (asRoot()) {
    const r = spawnSync('chown', ['-R', `${SANDBOX_RUN_UID}:${SANDBOX_RUN_UID}`, root], { stdio: 'ignore' });
    if (r.status !== 0) throw new Error('chown of the working directory failed');
  }
}

/** The next command (or claim) object; null at `until`. A missing object is 404, or 403 when the signer may not list the bucket: both mean "not yet". */
async function nextObject<T>(url: string, until: number, pollMs: [number, number]): Promise<T | null> {
  let delay = pollMs[0];
  for (;;) {
    let res: Response | null;
    try {
      res = await fetch(url);
    } catch {
      res = null;
    }
    if (res?.ok) return JSON.parse(Buffer.from(await res.arrayBuffer()).toString('utf8')) as T;
    if (res) {
      await res.arrayBuffer().catch(() => undefined);
      if (res.status !== 403 && res.status !== 404 && res.status < 500) {
        throw new Error(`command download failed with HTTP ${res.status}`);
      }
    }
    const left = until - Date.now();
    if (left <= 0) return null;
    await wait(Math.min(delay, left));
    delay = Math.min(pollMs[1], Math.ceil(delay * 1.5));
  }
}

async function runCommand(m: RunManifest, c: Extract<ExecCommand, { command: string }>): Promise<RunResult> {
  const root = m.workDir;
  const L = m.limits;
  const root0 = asRoot();
  const env = { PATH: PATH_ENV, HOME: root, ...m.env };
  const args = [
    '-c',
    WRAP,
    'sandbox',
    String(L.cpuSeconds),
    String(Math.max(1, Math.floor(L.diskBytes / 512))),
    root0 ? String(L.processes) : '',
    c.command,
  ];
  const started = Date.now();
  const cpuBefore = childrenCpuMs();
  const proc = spawn('/bin/sh', args, {
    cwd: root,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(root0 ? { uid: SANDBOX_RUN_UID, gid: SANDBOX_RUN_UID } : {}),
  });
  child = proc;
  const out: Buffer[] = [];
  let outLen = 0;
  let truncated = false;
  let err = Buffer.alloc(0);
  proc.stdout.on('data', (d: Buffer) => {
    const take = d.subarray(0, Math.max(0, L.outputBytes - outLen));
    if (take.length) {
      out.push(take);
      outLen += take.length;
    }
    if (take.length < d.length) truncated = true;
  });
  proc.stderr.on('data', (d: Buffer) => {
    err = Buffer.concat([err, d]);
    if (err.length > STDERR_TAIL_BYTES) err = err.subarray(err.length - STDERR_TAIL_BYTES);
  });
  proc.stdin.on('error', () => {});
  proc.stdin.end(c.stdin || '');
  let timedOut = false;
  const killAt = Math.min(
    typeof c.killAtMs === 'number' ? c.killAtMs : Number.POSITIVE_INFINITY,
    m.deadlineMs - RUNNER_DEADLINE_MARGIN_MS,
  );
  const timer = setTimeout(
    () => {
      timedOut = true;
      killGroup(proc.pid);
    },
    Math.max(0, killAt - Date.now()),
  );
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('exit', (code, sig) => resolve([code, sig]));
  });
  clearTimeout(timer);
  const durationMs = Date.now() - started;
  killGroup(proc.pid);
  await new Promise<void>((resolve) => {
    if (proc.stdout.closed && proc.stderr.closed) return resolve();
    const t = setTimeout(() => {
      proc.stdout.destroy();
      proc.stderr.destroy();
      resolve();
    }, 1000);
    proc.on('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
  child = undefined;
  const cpuAfter = childrenCpuMs();
  return {
    v: 1,
    exitCode,
    signal,
    stdout: Buffer.concat(out).toString('utf8'),
    stdoutTruncated: truncated,
    stderrTail: err.toString('utf8'),
    timedOut,
    durationMs,
    ...(cpuBefore !== undefined && cpuAfter !== undefined ? { cpuMs: cpuAfter - cpuBefore } : {}),
  };
}

/**
 * The CPU time of this runner's reaped children so far (user and system, theirs included: Linux's
 * cutime and cstime in /proc/self/stat, in clock ticks of 10 ms). The runner runs one command at a
 * time, so the difference across a command is that command's (docs/traces.md, the exec span).
 */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // cutime and cstime are fields 16 and 17 of the whole line: 14 and 15 after the name.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

async function serve(m: RunManifest): Promise<void> {
  log('run started', { runId: m.runId, slots: m.execs.length });
  try {
    await setup(m);
  } catch (err) {
    // Reported as the first command's result: the platform waits for that one first.
    const error = message(err);
    log('run failed', { runId: m.runId, error });
    const first = m.execs[0];
    if (first) await upload(first.resultUrl, JSON.stringify({ v: 1, error }));
    return;
  }
  log('ready', { runId: m.runId });
  for (let n = 1; n <= m.execs.length; n++) {
    const slot = m.execs[n - 1] as RunManifest['execs'][number];
    const c =
      n === 1 && m.first
        ? m.first
        : await nextObject<ExecCommand>(slot.commandUrl, m.deadlineMs, m.pollMs || [100, 250]);
    if (c === null) {
      log('deadline reached', { runId: m.runId, n });
      return;
    }
    if ('stop' in c) {
      log('stopped', { runId: m.runId, n });
      return;
    }
    let result: RunResult;
    try {
      result =
        Date.now() >= m.deadlineMs - RUNNER_DEADLINE_MARGIN_MS
          ? {
              v: 1,
              exitCode: null,
              signal: 'SIGKILL',
              stdout: '',
              stdoutTruncated: false,
              stderrTail: '',
              timedOut: true,
              durationMs: 0,
            }
          : await runCommand(m, c);
      if ('exitCode' in result) {
        log('command ended', {
          runId: m.runId,
          n,
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          durationMs: result.durationMs,
          stdoutBytes: Buffer.byteLength(result.stdout),
          stdoutTruncated: result.stdoutTruncated,
        });
      }
    } catch (err) {
      result = { v: 1, error: message(err) };
      log('command failed', { runId: m.runId, n, error: result.error });
    }
    await upload(slot.resultUrl, JSON.stringify(result));
    log('result uploaded', { runId: m.runId, n });
    if (c.last) {
      log('last command done', { runId: m.runId, n });
      return;
    }
  }
  log('all command slots used', { runId: m.runId });
}

/**
 * The bootstrap's call: serves the run (or, from a pool manifest, the runs of a warm runner:
 * warm-runner.ts), then ends the process (0, or 70 on a runner failure).
 */
export async function run(m: RunManifest | PoolManifest): Promise<void> {
  process.on('SIGTERM', () => {
    killGroup(child?.pid);
    process.exit(143);
  });
  try {
    if (m.v === 3) await servePool(m, { serve, nextObject, upload, log });
    else await serve(m);
    process.exit(0);
  } catch (err) {
    log('runner failed', { error: message(err) });
    process.exit(70);
  }
}
