import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The time a Fargate task takes from RunTask (or a service's launch) to its containers running:
 * an ENI attached, the image pulled, the container started, 20 to 60 s on AWS
 * (docs/sandbox-aws.md). The emulated deployment's tasks start in milliseconds under bubblewrap,
 * which would hide from every test what a caller of the real deployment waits for;
 * PLATFORM_EMULATOR_TASK_START_MS puts that wait back (docs/deploy.md, "Timing").
 *
 * Resolves true once `ms` have passed, or false at once if `signal` aborts first (the task was
 * stopped while it was still starting, as StopTask can on AWS).
 */
export async function waitForTaskStart(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
