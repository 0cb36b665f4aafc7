/**
 * Following a log (agent logs and service logs share one shape, docs/logs.md) by polling with
 * `since`: neither deployment streams logs. The CLI's `logs --follow` and the dashboard's live
 * service logs share this, so it stays free of Node-only imports.
 */

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  request_id: string | null;
}

/** How far back each poll looks again, for lines written late (CloudWatch's ingestion lag, commits racing their clock reads). */
export const LOOK_BACK_MS = 30_000;

/** The latest of the times given (ISO strings compare in time order), or undefined for none. */
export function latest(...times: (string | undefined)[]): string | undefined {
  const set = times.filter((t): t is string => t !== undefined);
  return set.length ? set.reduce((a, b) => (a > b ? a : b)) : undefined;
}

/**
 * The lines shown so far within the look-back window, counted (a service may print the same line
 * twice in one millisecond: both are shown, once each): a poll shows, of each distinct line, only
 * the copies beyond those already shown.
 */
export class SeenLogLines {
  private readonly counts = new Map<string, { timestamp: string; count: number }>();
  private newest = '';

  /** Hands `show` the lines not seen before, oldest first, from a page read newest first. */
  take(newestFirst: LogLine[], show: (l: LogLine) => void): void {
    const seen = new Map<string, number>();
    for (const l of [...newestFirst].reverse()) {
      const key = JSON.stringify([l.timestamp, l.level, l.message, l.request_id]);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const entry = this.counts.get(key) ?? { timestamp: l.timestamp, count: 0 };
      if (n > entry.count) {
        entry.count = n;
        this.counts.set(key, entry);
        show(l);
      }
      if (l.timestamp > this.newest) this.newest = l.timestamp;
    }
  }

  /** The start of the next poll's window; lines older than it are forgotten. */
  lookBackFrom(ms: number): string | undefined {
    if (!this.newest) return undefined;
    const from = new Date(Date.parse(this.newest) - ms).toISOString();
    for (const [key, e] of this.counts) if (e.timestamp < from) this.counts.delete(key);
    return from;
  }
}
