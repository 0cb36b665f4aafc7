import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ENV } from '../../functions/shared/env-names.ts';

export const CLI = fileURLToPath(new URL('../../bin/agenthost.ts', import.meta.url));
const CLOCK_AHEAD = new URL('./clock-ahead.ts', import.meta.url).href;

/**
 * This host's processes (other than this one) whose command line carries `marker`, or with
 * `environ`, whose command line or environment does: each as `pid: command line`. Read from /proc,
 * so a process that ends while it is read is simply not listed.
 */
export async function processesWith(marker: string, { environ = false } = {}): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    const carries =
      cmdline.includes(marker) ||
      (environ && (await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')).includes(marker));
    if (carries) found.push(`${pid}: ${cmdline}`);
  }
  return found;
}

export interface RunningPlatform {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  /** Standard output and standard error as they arrived. */
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stdout: string }>;
}

/**
 * Starts `agenthost start` (or other `args`: `start --emulated`) as its own process and waits for
 * the line that names its URL.
 */
export async function startPlatformProcess(
  env: Record<string, string>,
  options: { args?: string[]; timeoutMs?: number; clockAheadMs?: number } = {},
): Promise<RunningPlatform> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  // A clock ahead of the wall clock: the process lives "later", without the test waiting for it.
  const clockAhead = options.clockAheadMs ? ['--import', CLOCK_AHEAD] : [];
  const child = spawn(process.execPath, [...clockAhead, CLI, ...(options.args ?? ['start'])], {
    env: {
      ...process.env,
      PORT: '0',
      [ENV.logLevel]: 'warn',
      ...env,
      ...(options.clockAheadMs ? { AGENTHOST_TEST_CLOCK_AHEAD_MS: String(options.clockAheadMs) } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let all = '';
  child.stdout?.on('data', (d) => {
    out += d;
    all += d;
  });
  child.stderr?.on('data', (d) => {
    all += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`platform did not start in ${timeoutMs / 1000} s:\n${all}`));
    }, timeoutMs);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`platform exited with ${code}:\n${all}`));
    });
  });
  return {
    child,
    url,
    stdout: () => out,
    output: () => all,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, stdout: out };
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return { code, stdout: out };
    },
  };
}

/** The CLI in its own process, its output collected as it comes. */
function startCli(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; cwd?: string; nodeArgs?: string[] } = {},
) {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], {
    env: { ...process.env, [ENV.logLevel]: 'warn', ...env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Runs the CLI to completion, as a user's shell would: its own process, `input` on stdin (an
 * empty, closed stdin when absent, so nothing waits for a prompt); `nodeArgs` go to node before
 * the CLI (an `--import` that records what the start loads).
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; cwd?: string; nodeArgs?: string[] } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = startCli(args, env, { ...options, input: options.input ?? '' });
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/**
 * Runs the CLI with a pseudo-terminal for its stdin, stdout and stderr, as in a person's terminal
 * (util-linux `script`, whose exit code is the CLI's): what it does on a TTY rather than a pipe.
 * The output is the terminal's, stdout and stderr together, its line ends made `\n` again.
 */
export async function runCliOnTerminal(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  const child = spawn('script', ['--quiet', '--return', '--flush', '--command', command, '/dev/null'], {
    env: { ...process.env, [ENV.logLevel]: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output: output.replaceAll('\r\n', '\n') };
}

/** Starts a CLI command that keeps running (logs --follow, run of a service); `stop` ends it and answers its exit code. */
export function spawnCli(args: string[], env: Record<string, string>) {
  const cli = startCli(args, env);
  return {
    stdout: cli.stdout,
    stderr: cli.stderr,
    async stop(): Promise<number | null> {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGTERM');
      return cli.exited;
    },
  };
}
