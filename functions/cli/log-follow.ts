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
  limit?: string;
  interval?: string;
}

function lineText(l: LogLine): string {
  return `${l.timestamp} ${l.level.toUpperCase().padEnd(5)} ${l.message}${l.request_id ? ` [${l.request_id}]` : ''}`;
}

/** Prints the newest page (oldest line first, as a terminal reads); with --follow, then polls. */
export async function showLogs(ctx: CliContext, fetchPage: FetchLogPage, flags: LogFlags): Promise<void> {
  const limit = flags.limit === undefined ? undefined : Number(flags.limit);
  const base: LogQuery = {
    ...(flags.since ? { since: flags.since } : {}),
    ...(flags.until ? { until: flags.until } : {}),
    ...(flags.level ? { level: flags.level } : {}),
    ...(limit !== undefined ? { limit } : {}),
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
  const seen = new Set<string>();
  let newest = '';
  const take = (lines: LogLine[]) => {
    for (const l of [...lines].reverse()) {
      const key = JSON.stringify(l);
      if (l.timestamp < newest || seen.has(key)) continue;
      if (l.timestamp > newest) {
        newest = l.timestamp;
        seen.clear();
      }
      seen.add(key);
      print(l);
    }
  };
  take(first.logs);
  const intervalMs = Math.max(200, Number(flags.interval ?? 2) * 1000);
  for (;;) {
    await sleep(intervalMs);
    const query: LogQuery = { ...base, ...(newest ? { since: newest } : {}) };
    // Every line since the newest seen, oldest pages last: gather them, then print in order.
    const lines: LogLine[] = [];
    let cursor: string | null = null;
    do {
      const page = await fetchPage({ ...query, limit: 5000, ...(cursor ? { cursor } : {}) });
      lines.push(...page.logs);
      cursor = page.next_cursor;
    } while (cursor);
    take(lines);
  }
}
