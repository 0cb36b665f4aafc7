import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Lambda's CPU share: a function gets CPU in proportion to its memory, one vCPU at 1,769 MB (AWS's
 * "Lambda memory and computing power"), six at 10,240 MB. An emulated instance is a process of this
 * machine and would otherwise use a whole core whatever its memory, so a function measured at
 * 384 MB would run its CPU work as fast as at 1,769 MB and its billed duration would err low; the
 * cost bench (bench/aws-cost.ts) decides memory on that duration. With
 * PLATFORM_EMULATOR_LAMBDA_CPU=share, each instance runs in a CPU cgroup of its own whose CFS quota
 * is its share of one period (docs/deploy.md, "The emulator's timing").
 *
 * Needs a writable CPU cgroup hierarchy (root, cgroup v1's `cpu` controller or v2's `cpu.max`);
 * without one, `openCpuShares` throws, naming what is missing, rather than measure unthrottled.
 */

/** The memory at which a Lambda function gets one whole vCPU. */
export const MB_PER_VCPU = 1769;

/** The vCPUs a function of `memoryMb` gets: its memory's share of one, up to Lambda's six. */
export function vcpusOf(memoryMb: number): number {
  return Math.min(6, memoryMb / MB_PER_VCPU);
}

/** CFS's period, microseconds (the kernel's default). */
const PERIOD_US = 100_000;

type Hierarchy = { version: 1 | 2; root: string };

function findHierarchy(): Hierarchy | undefined {
  // cgroup v2 (unified): one tree, the cpu controller listed in cgroup.controllers.
  const unified = '/sys/fs/cgroup';
  const controllers = join(unified, 'cgroup.controllers');
  if (existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu'))
    return { version: 2, root: unified };
  for (const root of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
    if (existsSync(join(root, 'cpu.cfs_quota_us'))) return { version: 1, root };
  }
  return undefined;
}

/** One instance's group: place its process, remove the group once the process has exited. */
export interface CpuShareGroup {
  place(pid: number): void;
  remove(): void;
}

export interface CpuShares {
  /** A group for one instance of a function with `memoryMb`. */
  group(name: string, memoryMb: number): CpuShareGroup;
  /** Removes this host's parent group (its instances' groups must be gone). */
  close(): void;
}

/** This host's groups: `<hierarchy>/agenthost-lambda-<pid>/<instance>`. */
export function openCpuShares(): CpuShares {
  const hierarchy = findHierarchy();
  if (!hierarchy)
    throw new Error(
      'PLATFORM_EMULATOR_LAMBDA_CPU=share needs a CPU cgroup hierarchy (cgroup v2 with the cpu controller, or v1 mounted at /sys/fs/cgroup/cpu); none was found',
    );
  // Groups a host that was killed left behind are empty: removed (one still in use stays).
  for (const name of readdirSync(hierarchy.root)) {
    if (name.startsWith('agenthost-lambda-')) removeHostGroups(join(hierarchy.root, name));
  }
  const parent = join(hierarchy.root, `agenthost-lambda-${process.pid}`);
  try {
    mkdirSync(parent, { recursive: true });
    // cgroup v2 hands the cpu controller down to children only when the parent enables it.
    if (hierarchy.version === 2) writeFileSync(join(parent, 'cgroup.subtree_control'), '+cpu');
  } catch (err) {
    throw new Error(
      `PLATFORM_EMULATOR_LAMBDA_CPU=share could not create a CPU cgroup under ${hierarchy.root} (${(err as Error).message}): it needs root`,
    );
  }
  return {
    group(name, memoryMb) {
      const dir = join(parent, name);
      mkdirSync(dir, { recursive: true });
      const quota = Math.max(1000, Math.round(PERIOD_US * vcpusOf(memoryMb)));
      if (hierarchy.version === 2) writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
      else {
        writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota));
      }
      return {
        place(pid) {
          writeFileSync(join(dir, 'cgroup.procs'), String(pid));
        },
        remove() {
          try {
            rmdirSync(dir);
          } catch {
            // A process still in it (the kernel removes nothing in use); the host's close retries.
          }
        },
      };
    },
    // A process still running in one of them: left for the next host's start to remove.
    close: () => removeHostGroups(parent),
  };
}

/**
 * A host's group and its instances' groups, removed; nothing if one is still in use (the kernel
 * removes no group with a process in it) or not ours to remove.
 */
function removeHostGroups(parent: string): void {
  try {
    for (const child of readdirSync(parent, { withFileTypes: true }))
      if (child.isDirectory()) rmdirSync(join(parent, child.name));
    rmdirSync(parent);
  } catch {
    // Left for the next host's start.
  }
}
