/**
 * Printing log pages (agent logs and service logs share one shape, docs/logs.md), and --follow:
 * polling with `since` set to the newest line seen, which works the same against both deployments
 * (neither streams logs). Lines of the newest millisecond already printed are not printed again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LOOK_BACK_MS, type LogLine, latest, SeenLogLines } from '../shared/log-follow-window.ts';
import type { CliContext } from './cli-context.ts';
import { escapeControls } from './terminal-text.ts';

export type { LogLine };

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

/** One log line is one terminal line: a message's newlines show as `\n`, as its other controls do. */
function lineText(l: LogLine): string {
  return escapeControls(
    `${l.timestamp} ${l.level.toUpperCase().padEnd(5)} ${l.message}${l.request_id ? ` [${l.request_id}]` : ''}`,
  );
}

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
  const printed = new SeenLogLines();
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
