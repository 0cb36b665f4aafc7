/**
 * CPU time and resident memory of a process and its descendants, read from /proc (Linux), so the
 * gateway bench (bench/calls.ts) can charge each gateway for the work of its own processes
 * (workers included) whatever language or framework it runs on; and the CPU time of one command
 * from start to end, every process it started included (commandCpu: bench/cli-start.ts,
 * bench/test-suite-cpu.ts).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null; // the process (or thread) has exited
  }
};

/** `pid` and every live descendant of it. */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pids[i]}/task`);
    } catch {}
    for (const task of tasks) {
      const children = read(`/proc/${pids[i]}/task/${task}/children`) ?? '';
      for (const child of children.split(' ').filter(Boolean)) pids.push(Number(child));
    }
  }
  return pids;
}

/** User plus system CPU time in ms from the text of a /proc/<pid>/stat file. */
export function statCpuMs(stat: string): number {
  if (!stat) return 0;
  // Fields after the command name (which may hold spaces and parentheses): state is field 3,
  // utime field 14, stime field 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * The user plus system CPU time in ms of the children a process has waited for (cutime and cstime,
 * fields 16 and 17), from the text of its /proc/<pid>/stat file.
 */
export function statWaitedCpuMs(stat: string): number {
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

/** Where a command's output goes: files, /dev/null when not named; stderr the same file as stdout when the paths are equal. */
export interface CommandOptions {
  cwd?: string;
  /** Its whole environment (this process's when not given). */
  env?: NodeJS.ProcessEnv;
  stdout?: string;
  stderr?: string;
}

/**
 * Runs `argv` through `sh`, which waits for it and then reads its own /proc/<pid>/stat: the waited
 * children's user plus system time (cutime + cstime) is the command's, with everything it started
 * and reaped (a process tree sampled from outside misses what ends between samples). Answers that
 * CPU time and the wall time, in ms, and the command's exit code (null when sh did not report it).
 */
export async function commandCpu(
  argv: string[],
  options: CommandOptions = {},
): Promise<{ wallMs: number; cpuMs: number; exit: number | null }> {
  const { stdout = '/dev/null', stderr = '/dev/null' } = options;
  const err = stderr === stdout ? '2>&1' : '2>"$err"';
  // The files are sh's first two arguments, so their paths need no quoting in the script.
  const script = `out=$1 err=$2; shift 2; "$@" >"$out" ${err}; code=$?; cat /proc/$$/stat; echo " exit $code"`;
  const started = performance.now();
  const child = spawn('sh', ['-c', script, 'sh', stdout, stderr, ...argv], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const wallMs = performance.now() - started;
  const exit = /exit (\d+)/.exec(out)?.[1];
  return {
    wallMs,
    cpuMs: statWaitedCpuMs(out),
    exit: code === 0 && exit !== undefined ? Number(exit) : null,
  };
}

/** CPU time (user plus system) used so far by `pid` and its descendants, in ms. */
export const treeCpuMs = (pid: number): number =>
  processTree(pid).reduce((sum, p) => sum + statCpuMs(read(`/proc/${p}/stat`) ?? ''), 0);

/** Resident set size of `pid` and its descendants, in MB (VmRSS of each, summed). */
export const treeRssMb = (pid: number): number =>
  processTree(pid).reduce((sum, p) => {
    const kb = /VmRSS:\s+(\d+) kB/.exec(read(`/proc/${p}/status`) ?? '')?.[1];
    return sum + Number(kb ?? 0) / 1024;
  }, 0);

/** Refuses to run a bench that needs `needed` open descriptors under a lower soft limit, saying how to raise it. */
export async function checkDescriptors(needed: number): Promise<void> {
  const limits = read('/proc/self/limits') ?? '';
  const soft = Number(/Max open files\s+(\d+)/.exec(limits)?.[1] ?? Number.POSITIVE_INFINITY);
  if (soft < needed)
    throw new Error(`open-file limit ${soft} is under ${needed}: raise it (ulimit -n 4096) and run again`);
}
