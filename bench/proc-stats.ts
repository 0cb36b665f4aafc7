/**
 * CPU time and resident memory of a process and its descendants, read from /proc (Linux), so the
 * gateway bench (bench/calls.ts) can charge each gateway for the work of its own processes
 * (workers included) whatever language or framework it runs on.
 */
import { execFileSync } from 'node:child_process';
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
