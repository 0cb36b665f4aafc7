/**
 * How long a warm runner bound to a (workspace, agent version) waits for that pair's next run
 * (docs/sandbox-aws.md, "How long a bound runner waits"). A runner costs its task's time whether it
 * runs or waits, so its wait follows the pair's own traffic: a pair called once keeps its runner
 * only for the bound minimum (60 s), one called steadily keeps it for twice the longer of its last
 * two gaps between calls, so the next call of a steady pair finds it with room for jitter, and no
 * wait is ever longer than 10 minutes.
 */

export interface IdleWaitBounds {
  /** The wait of a pair with no steady traffic (PLATFORM_SANDBOX_IDLE_MIN_MS). @default 60 s */
  minMs: number;
  /** The longest wait, whatever the traffic. @default 10 minutes */
  maxMs: number;
}

export const IDLE_WAIT_BOUNDS: IdleWaitBounds = { minMs: 60_000, maxMs: 10 * 60_000 };

/**
 * `gaps`: the pair's last gaps between calls, latest first (ms; negative or missing: none known).
 * Two gaps within the longest wait make a pair steady; one gap is not enough, so a pair called
 * twice by chance does not get a long wait after its second call.
 */
export function idleWaitMs(gaps: readonly number[], bounds: IdleWaitBounds = IDLE_WAIT_BOUNDS): number {
  const minMs = Math.min(bounds.minMs, bounds.maxMs);
  const recent = gaps.slice(0, 2);
  if (recent.length < 2 || recent.some((g) => !(g >= 0 && g <= bounds.maxMs))) return minMs;
  return Math.min(bounds.maxMs, Math.max(minMs, 2 * Math.max(...recent)));
}
