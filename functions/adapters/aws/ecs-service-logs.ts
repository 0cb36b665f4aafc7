/**
 * A service's log lines in AWS, read back from CloudWatch Logs (the app container's awslogs
 * streams), for the ServiceRunner port's logs().
 */
import { FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import type { EcsServiceRunnerOptions } from './ecs-service-options.ts';

type Level = 'info' | 'warn' | 'error';
interface Line {
  at: string;
  level: Level;
  message: string;
}

/** A `level` filter keeps that severity and the ones above it (docs/logs.md). */
const SEVERITY = { info: 0, warn: 1, error: 2 } as const;
/** The services' log group keeps lines a month (lib/constructs/service-hosting.ts). */
const RETENTION_MS = 31 * 86_400_000;
/** The first window read back from `until`; each next one is four times wider. */
const FIRST_WINDOW_MS = 60_000;
/** Lines one request may read in all before it asks the caller to narrow the range. */
const MAX_LINES_READ = 100_000;
/** Lines stamped a little ahead of this process's clock (another host's) are still the newest. */
const CLOCK_SLACK_MS = 5 * 60_000;

/**
 * The app container's newest `limit` lines within [since, until] at or above `level`, in time
 * order. FilterLogEvents only reads forward in time, so the range is read backwards in windows
 * from `until` (one minute, then four times wider each time) until `limit` lines are found or
 * `since` (else the log group's retention) is reached; the newest page of a long log costs a few
 * small reads, not a scan from its first line.
 *
 * CloudWatch keeps no stream of origin per line, so the level is inferred: the runner's own
 * `[platform]` lines are warn, lines that read as errors (error, exception, fatal, traceback) are
 * error, the rest info. Secret values were redacted in the task before the lines left it.
 */
export async function readServiceLogs(
  o: EcsServiceRunnerOptions,
  serviceId: string,
  query: { since?: string; until?: string; level?: Level; limit: number },
): Promise<Line[]> {
  const now = Date.now();
  const lower = query.since ? Date.parse(query.since) : now - RETENTION_MS;
  let end = query.until ? Date.parse(query.until) : now + CLOCK_SLACK_MS;
  let width = FIRST_WINDOW_MS;
  const windows: Line[][] = []; // newest window first
  let found = 0;
  let read = 0;
  while (end >= lower && found < query.limit) {
    const start = Math.max(lower, end - width + 1);
    const lines: Line[] = [];
    let nextToken: string | undefined;
    do {
      const page = await o.logs.send(
        new FilterLogEventsCommand({
          logGroupName: o.logGroup,
          logStreamNamePrefix: `app/${serviceId}`,
          startTime: start,
          endTime: end,
          nextToken,
        }),
      );
      for (const e of page.events ?? []) {
        const message = (e.message ?? '').replace(/\n$/, '');
        const level: Level = message.startsWith('[platform]')
          ? 'warn'
          : /\b(error|exception|fatal|traceback)\b/i.test(message)
            ? 'error'
            : 'info';
        read++;
        if (query.level && SEVERITY[level] < SEVERITY[query.level]) continue;
        lines.push({ at: new Date(e.timestamp ?? 0).toISOString(), level, message });
      }
      if (read > MAX_LINES_READ)
        throw new Error(
          `more than ${MAX_LINES_READ} log lines in the range read; narrow it with since and until`,
        );
      nextToken = page.nextToken;
    } while (nextToken);
    // Streams are interleaved by time; a stable sort keeps each stream's own order at a tie.
    lines.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    windows.push(lines);
    found += lines.length;
    end = start - 1;
    width *= 4;
  }
  return windows.reverse().flat().slice(-query.limit);
}
