/**
 * A sandbox task's size (docs/sandbox-aws.md, "Sizes"): the smallest Fargate size that fits what an
 * agent declares (its manifest's `sandbox.cpu` and `sandbox.memory_mb`; what it leaves out is the
 * default's), passed to RunTask as task overrides. Only Fargate's own combinations of CPU and memory
 * are ever asked for: anything else ECS refuses.
 */

/** CPU units (1024 a vCPU) and MiB, as RunTask's overrides and DescribeTasks name them. */
export interface FargateSize {
  cpu: number;
  memory: number;
}

/** What an agent says it needs: vCPUs and MiB; either may be left out. */
export interface RunnerNeeds {
  cpu?: number | undefined;
  memoryMb?: number | undefined;
}

/**
 * The size of a run that declares nothing, and of the unbound runners the pool keeps: a quarter of
 * a vCPU and 1 GiB. 1 GiB is the memory every exec gets locally (DEFAULT_SANDBOX_LIMITS.memoryBytes),
 * so a tool that runs under `npm start` fits here too; a quarter vCPU is Fargate's smallest, and
 * most tool runs wait on I/O, not CPU. It costs 30% of the 1 vCPU and 2 GiB before, which matters
 * most where a task mostly waits: its start, and its idle time after a run.
 */
export const DEFAULT_RUNNER_SIZE: FargateSize = { cpu: 256, memory: 1024 };

const range = (from: number, to: number, step: number) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

/** Fargate's task sizes for Linux (AWS's "Task CPU and memory" table). */
export const FARGATE_SIZES: readonly FargateSize[] = [
  ...[512, 1024, 2048].map((memory) => ({ cpu: 256, memory })),
  ...range(1024, 4096, 1024).map((memory) => ({ cpu: 512, memory })),
  ...range(2048, 8192, 1024).map((memory) => ({ cpu: 1024, memory })),
  ...range(4096, 16384, 1024).map((memory) => ({ cpu: 2048, memory })),
  ...range(8192, 30720, 1024).map((memory) => ({ cpu: 4096, memory })),
  ...range(16384, 61440, 4096).map((memory) => ({ cpu: 8192, memory })),
  ...range(32768, 122880, 8192).map((memory) => ({ cpu: 16384, memory })),
];

/** us-east-1 ARM64 list prices an hour, only to order sizes by cost (a vCPU costs about 9 GB). */
const hourly = (s: FargateSize) => (s.cpu / 1024) * 0.03238 + (s.memory / 1024) * 0.00356;

/** The cheapest Fargate size with at least the CPU and memory asked for; undefined if none is that large. */
export function fargateSize(needs: RunnerNeeds = {}): FargateSize | undefined {
  const cpu = needs.cpu === undefined ? DEFAULT_RUNNER_SIZE.cpu : Math.ceil(needs.cpu * 1024);
  const memory = needs.memoryMb ?? DEFAULT_RUNNER_SIZE.memory;
  let best: FargateSize | undefined;
  for (const s of FARGATE_SIZES) {
    if (s.cpu >= cpu && s.memory >= memory && (!best || hourly(s) < hourly(best))) best = s;
  }
  return best;
}

/** Whether a runner of size `have` can serve a run that needs `need`. */
export const fits = (have: FargateSize, need: FargateSize) =>
  have.cpu >= need.cpu && have.memory >= need.memory;
