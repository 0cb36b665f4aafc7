/**
 * Printing log pages (agent logs and service logs share one shape, docs/logs.md), and --follow:
 * polling with `since` set to the newest line seen, which works the same against both deployments
 * (neither streams logs). Lines of the newest millisecond already printed are not printed again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CliContext } from './cli-context.ts';

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  request_id: string | null;
}

export interface LogQuery {
  since?: string;
  until?: string;
  level?: 'info' | 'warn' | 'error';
  limit?: number;
  cursor?: string;
}

export type FetchLogPage = (query: LogQuery) => Promise<{ logs: LogLine[]; next_cursor: string | null }>;

export interface LogFlags {
  follow?: boolean;
  since?: string;
  until?: string;
  level?: 'info' | 'warn' | 'error';
  limit?: number;
  interval?: number;
}

function lineText(l: LogLine): string {
  return `${l.timestamp} ${l.level.toUpperCase().padEnd(5)} ${l.message}${l.request_id ? ` [${l.request_id}]` : ''}`;
}

/** How far back each poll of --follow looks again, for lines written late (CloudWatch's ingestion lag, commits racing their clock reads). */
const LOOK_BACK_MS = 30_000;

/** Prints the newest page (oldest line first, as a terminal reads); with --follow, then polls. */
export async function showLogs(ctx: CliContext, fetchPage: FetchLogPage, flags: LogFlags): Promise<void> {
  const base: LogQuery = {
    ...(flags.since ? { since: flags.since } : {}),
    ...(flags.until ? { until: flags.until } : {}),
    ...(flags.level ? { level: flags.level } : {}),
    ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
  };
  const first = await fetchPage(base);
  if (!flags.follow) {
    if (ctx.json) ctx.out(JSON.stringify(first, null, 2));
    else for (const l of [...first.logs].reverse()) ctx.out(lineText(l));
    if (!ctx.json && first.next_cursor) ctx.note('(older lines: --until, or --limit up to 5000)');
    return;
  }
  // Following: one JSON document per line with --json (NDJSON), so a pipe can read as it comes.
  const print = (l: LogLine) => ctx.out(ctx.json ? JSON.stringify(l) : lineText(l));
  const printed = new PrintedLines();
  printed.take(first.logs, print);
  // A full first page left older lines unshown: the look-back must not print them as new.
  const floor = first.next_cursor ? first.logs.at(-1)?.timestamp : undefined;
  const intervalMs = (flags.interval ?? 2) * 1000;
  for (;;) {
    await sleep(intervalMs);
    const since = latest(printed.lookBackFrom(LOOK_BACK_MS), floor, base.since);
    // Every line of the window, following the cursor, then printed oldest first.
    const lines: LogLine[] = [];
    let cursor: string | null = null;
    do {
      const page = await fetchPage({
        ...base,
        ...(since ? { since } : {}),
        limit: 5000,
        ...(cursor ? { cursor } : {}),
      });
      lines.push(...page.logs);
      cursor = page.next_cursor;
    } while (cursor);
    printed.take(lines, print);
  }
}

function latest(...times: (string | undefined)[]): string | undefined {
  const set = times.filter((t): t is string => t !== undefined);
  return set.length ? set.reduce((a, b) => (a > b ? a : b)) : undefined;
}

/**
 * The lines --follow has printed within the look-back window, counted (a service may print the
 * same line twice in one millisecond: both are shown, once each): a poll prints, of each distinct
 * line, only the copies beyond those already printed.
 */
class PrintedLines {
  private readonly counts = new Map<string, { timestamp: string; count: number }>();
  private newest = '';

  take(newestFirst: LogLine[], print: (l: LogLine) => void): void {
    const seen = new Map<string, number>();
    for (const l of [...newestFirst].reverse()) {
      const key = JSON.stringify([l.timestamp, l.level, l.message, l.request_id]);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const entry = this.counts.get(key) ?? { timestamp: l.timestamp, count: 0 };
      if (n > entry.count) {
        entry.count = n;
        this.counts.set(key, entry);
        print(l);
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
