/**
 * Several platforms loaded at the same time, each with its own calls in flight, and what each used
 * over the same windows of wall time: how one build or setting compares with another in CPU per
 * call, more finely than measures taken one after the other. On a shared machine the neighbours'
 * load moves between two measures seconds apart (a round's ratio of two sequential measures spread
 * from 0.76 to 1.37 in `npm run bench:calls`), while platforms measured over the same window share
 * whatever the machine does in it. Used by `npm run bench:calls` (tracing on against off, with a
 * second traced platform as the calibration) and `npm run bench:calls-together`.
 */

import type { ChildProcess } from 'node:child_process';
import type { Agent } from 'undici';
import { callAgent } from './bench-agent.ts';
import { treeCpuMs } from './proc-stats.ts';

/** One platform under load: its process and one call of it (resolving with the status). */
export interface LoadedSide {
  pid: number;
  send: () => Promise<number>;
}

/** What a window read of one side, before and after. */
export interface WindowReading<R> {
  before: R;
  after: R;
}

export interface SameWindowOptions {
  /** Calls in flight on each side. */
  concurrency: number;
  windows: number;
  windowMs: number;
  /** Calls each side answers under the shared load before the first window. */
  warmup: number;
}

/**
 * Loads every side at once (`concurrency` calls in flight each), waits until each has answered
 * `warmup` calls (the JIT, the row cache, the first pages), then reads each side with `read` (given
 * its pid and the calls it has answered so far) at the start and end of `windows` windows of
 * `windowMs` each. A call that does not answer 200, or fails, stops the measure at once, naming its
 * side.
 */
export async function sameWindows<K extends string, R>(
  sides: Record<K, LoadedSide>,
  options: SameWindowOptions,
  read: (pid: number, calls: number) => R,
): Promise<Record<K, WindowReading<R>>[]> {
  const names = Object.keys(sides) as K[];
  const calls = Object.fromEntries(names.map((n) => [n, 0])) as Record<K, number>;
  let stopping = false;
  // The first failure, and what wakes the wait it falls in (the warm-up's or a window's) at once.
  let failed: unknown;
  let wake: () => void = () => undefined;
  const fail = (err: unknown) => {
    failed ??= err;
    wake();
  };
  const worker = async (name: K) => {
    const { send } = sides[name];
    while (!stopping && failed === undefined) {
      let status: number;
      try {
        status = await send();
      } catch (err) {
        throw new Error(`a bench call to ${name} failed`, { cause: err });
      }
      if (status !== 200) throw new Error(`a bench call to ${name} answered ${status}`);
      calls[name]++;
    }
  };
  const workers = names.flatMap((name) =>
    Array.from({ length: options.concurrency }, () => worker(name).catch(fail)),
  );
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const readAll = () =>
    Object.fromEntries(names.map((n) => [n, read(sides[n].pid, calls[n])])) as Record<K, R>;
  const windows: Record<K, WindowReading<R>>[] = [];
  try {
    while (failed === undefined && names.some((n) => calls[n] < options.warmup)) await sleep(100);
    for (let w = 0; w < options.windows && failed === undefined; w++) {
      const before = readAll();
      await sleep(options.windowMs);
      if (failed !== undefined) break;
      const after = readAll();
      windows.push(
        Object.fromEntries(names.map((n) => [n, { before: before[n], after: after[n] }])) as Record<
          K,
          WindowReading<R>
        >,
      );
    }
  } finally {
    // Every call in flight settles before the measure returns: none outlives it.
    stopping = true;
    await Promise.allSettled(workers);
  }
  if (failed !== undefined) throw failed;
  return windows;
}

/** Each platform's CPU ms per call (its process tree's) in each of the same windows. */
export async function cpuInSameWindows(
  platforms: Record<string, { url: string; child: ChildProcess }>,
  dispatcher: Agent,
  options: SameWindowOptions,
): Promise<Map<string, number[]>> {
  const sides = Object.fromEntries(
    Object.entries(platforms).map(([name, p]) => [
      name,
      { pid: p.child.pid as number, send: callAgent(p.url, dispatcher) },
    ]),
  );
  const windows = await sameWindows(sides, options, (pid, calls) => ({ cpu: treeCpuMs(pid), calls }));
  return new Map(
    Object.keys(platforms).map((name) => [
      name,
      windows.map((w) => cpuPerCall(name, w[name] as WindowReading<CpuReading>)),
    ]),
  );
}

/** What a window reads of a side to price its calls: its CPU ms so far, and its calls answered. */
export interface CpuReading {
  cpu: number;
  calls: number;
}

/** A side's CPU ms per call over one window; a window in which it answered nothing stops the bench. */
export function cpuPerCall(name: string, { before, after }: WindowReading<CpuReading>): number {
  if (after.calls === before.calls) throw new Error(`${name} answered no call in a window`);
  return (after.cpu - before.cpu) / (after.calls - before.calls);
}
