/**
 * A service's log lines in AWS, read back from CloudWatch Logs (the app container's awslogs
 * streams), for the ServiceRunner port's logs().
 */
import { FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import type { EcsServiceRunnerOptions } from './ecs-service-options.ts';

/**
 * The app container's lines from CloudWatch Logs (streams `app/<service id>/...`), the newest
 * `limit` within [since, until] at or above `level`, in time order. CloudWatch keeps no stream of origin per line,
 * so the level is inferred: the runner's own `[platform]` lines are warn, lines that read as
 * errors (error, exception, fatal, traceback) are error, the rest info. Secret values were
 * redacted in the task before the lines left it.
 */
/** A `level` filter keeps that severity and the ones above it (docs/logs.md). */
const SEVERITY = { info: 0, warn: 1, error: 2 } as const;

export async function readServiceLogs(
  o: EcsServiceRunnerOptions,
  serviceId: string,
  query: { since?: string; until?: string; level?: 'info' | 'warn' | 'error'; limit: number },
) {
  const out: { at: string; level: 'info' | 'warn' | 'error'; message: string }[] = [];
  let nextToken: string | undefined;
  let pages = 0;
  do {
    const page = await o.logs.send(
      new FilterLogEventsCommand({
        logGroupName: o.logGroup,
        logStreamNamePrefix: `app/${serviceId}`,
        ...(query.since ? { startTime: Date.parse(query.since) } : {}),
        ...(query.until ? { endTime: Date.parse(query.until) } : {}),
        nextToken,
      }),
    );
    for (const e of page.events ?? []) {
      const message = (e.message ?? '').replace(/\n$/, '');
      const level = message.startsWith('[platform]')
        ? 'warn'
        : /\b(error|exception|fatal|traceback)\b/i.test(message)
          ? 'error'
          : 'info';
      if (query.level && SEVERITY[level] < SEVERITY[query.level]) continue;
      out.push({ at: new Date(e.timestamp ?? 0).toISOString(), level, message });
    }
    nextToken = page.nextToken;
    pages++;
  } while (nextToken && pages < 20);
  return out.slice(-query.limit);
}
