import { AwsWireError } from './emulator-http.ts';

/**
 * The sizes a Fargate task may have (Linux): its task-level cpu (in CPU units, 1024 a vCPU) and the
 * memory (MiB) each allows, as AWS lists them (Amazon ECS Developer Guide, "Task CPU and memory",
 * and its troubleshooting page for the error below,
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-cpu-memory-error.html).
 * The emulated ECS checks every task against them, a RunTask's (its definition's size or its
 * overrides') and a service's (its definition's, at RegisterTaskDefinition), as ECS does.
 */

const GIB = 1024;
const range = (from: number, to: number, step: number) =>
  Array.from({ length: (to - from) / step + 1 }, (_, i) => from + i * step);

export const FARGATE_SIZES: ReadonlyMap<number, readonly number[]> = new Map([
  [256, [512, 1 * GIB, 2 * GIB]],
  [512, range(1 * GIB, 4 * GIB, GIB)],
  [1024, range(2 * GIB, 8 * GIB, GIB)],
  [2048, range(4 * GIB, 16 * GIB, GIB)],
  [4096, range(8 * GIB, 30 * GIB, GIB)],
  [8192, range(16 * GIB, 60 * GIB, 4 * GIB)],
  [16384, range(32 * GIB, 120 * GIB, 8 * GIB)],
]);

export interface FargateSize {
  /** CPU units (1024 = 1 vCPU). */
  cpu: number;
  /** MiB. */
  memory: number;
}

/**
 * A task definition writes its size as a number string ("1024") or with its unit ("1 vCPU",
 * "2 GB"); ECS turns the latter into the former when it registers the definition.
 */
function units(value: unknown, unit: RegExp, per: number): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const m = new RegExp(`^(\\d+(?:\\.\\d+)?)\\s*${unit.source}$`, 'i').exec(text);
  return m ? Math.round(Number(m[1]) * per) : Number.NaN;
}

/**
 * The Fargate size of a task with this cpu and memory, or ECS's ClientException for a pair Fargate
 * has no size for. The message is ECS's own ("No Fargate configuration exists for given values:
 * 1024 CPU, 1024 memory. See the Amazon ECS documentation for the valid values.", as
 * RegisterTaskDefinition and RunTask answer it; e.g. aws-games/cloud-game-development-toolkit#737).
 */
export function fargateSize(cpu: unknown, memory: unknown): FargateSize {
  const c = units(cpu, /vcpu/, 1024);
  const m = units(memory, /gb/, 1024);
  const allowed = c === undefined ? undefined : FARGATE_SIZES.get(c);
  if (c === undefined || m === undefined || !allowed?.includes(m)) {
    throw new AwsWireError(
      'ClientException',
      400,
      `No Fargate configuration exists for given values: ${String(cpu ?? 0)} CPU, ${String(memory ?? 0)} memory. See the Amazon ECS documentation for the valid values.`,
    );
  }
  return { cpu: c, memory: m };
}
