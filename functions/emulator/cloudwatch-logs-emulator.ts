import { AwsJsonServer } from './aws-json-server.ts';
import { AwsWireError } from './emulator-http.ts';

/**
 * CloudWatch Logs for the emulated deployment: FilterLogEvents over awsJson1_1 (X-Amz-Target
 * Logs_20140328.FilterLogEvents), the call the ECS service runner reads service logs with, over
 * the lines the emulated awslogs driver of ECS tasks puts (`putLine`, one event per line, stream
 * `<prefix>/<container>/<task id>`). Log groups are the template's. Kept in memory: a restart of the
 * emulated deployment starts with empty streams. filterPattern is not emulated (the runner sends
 * none); a pattern is refused rather than ignored.
 */

interface LogEvent {
  stream: string;
  timestamp: number;
  ingestionTime: number;
  message: string;
  eventId: string;
}

/** CloudWatch's page limits: 10,000 events (or 1 MB). */
const MAX_PAGE_EVENTS = 10_000;
const MAX_PAGE_BYTES = 1024 * 1024;
/** What one log group keeps here at most (the oldest go first). */
const MAX_GROUP_EVENTS = 200_000;

export class CloudWatchLogsEmulator {
  private readonly groups = new Map<string, LogEvent[]>();
  private readonly server: AwsJsonServer;
  private sequence = 0;

  constructor(logGroups: string[]) {
    for (const g of logGroups) this.groups.set(g, []);
    this.server = new AwsJsonServer('Logs_20140328', {
      FilterLogEvents: (b) => this.filter(b),
    });
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** One line of a stream, as the awslogs driver sends it (the group must exist, as in AWS). */
  putLine(group: string, stream: string, message: string, timestamp = Date.now()): void {
    const events = this.groups.get(group);
    if (!events) return;
    events.push({
      stream,
      timestamp,
      ingestionTime: Date.now(),
      message,
      eventId: String(++this.sequence).padStart(56, '0'),
    });
    if (events.length > MAX_GROUP_EVENTS) events.splice(0, events.length - MAX_GROUP_EVENTS);
  }

  private filter(b: Record<string, unknown>): unknown {
    const name = String(b.logGroupName ?? b.logGroupIdentifier ?? '');
    const events = this.groups.get(name.replace(/^arn:.*:log-group:/, '').replace(/:\*$/, ''));
    if (!events) {
      throw new AwsWireError('ResourceNotFoundException', 400, 'The specified log group does not exist.');
    }
    if (typeof b.filterPattern === 'string' && b.filterPattern.trim() !== '') {
      throw new AwsWireError(
        'InvalidParameterException',
        400,
        'filterPattern is not supported by the emulator',
      );
    }
    const prefix = typeof b.logStreamNamePrefix === 'string' ? b.logStreamNamePrefix : undefined;
    const names = Array.isArray(b.logStreamNames) ? (b.logStreamNames as string[]) : undefined;
    if (prefix !== undefined && names !== undefined) {
      throw new AwsWireError(
        'InvalidParameterException',
        400,
        'logStreamNames and logStreamNamePrefix are mutually exclusive',
      );
    }
    const start = typeof b.startTime === 'number' ? b.startTime : undefined;
    const end = typeof b.endTime === 'number' ? b.endTime : undefined;
    const limit = Math.min(
      MAX_PAGE_EVENTS,
      typeof b.limit === 'number' && b.limit > 0 ? b.limit : MAX_PAGE_EVENTS,
    );
    const matching = events
      .filter(
        (e) =>
          (prefix === undefined || e.stream.startsWith(prefix)) &&
          (names === undefined || names.includes(e.stream)) &&
          (start === undefined || e.timestamp >= start) &&
          (end === undefined || e.timestamp <= end),
      )
      .sort((x, y) => x.timestamp - y.timestamp || x.eventId.localeCompare(y.eventId));
    // The token is the last event id answered: stable while more lines arrive.
    const after =
      typeof b.nextToken === 'string' ? Buffer.from(b.nextToken, 'base64url').toString('utf8') : '';
    let from = 0;
    if (after) {
      from = matching.findIndex((e) => e.eventId === after) + 1;
      if (from === 0) throw new AwsWireError('InvalidParameterException', 400, 'The next token is not valid');
    }
    const page: LogEvent[] = [];
    let bytes = 0;
    for (let i = from; i < matching.length && page.length < limit; i++) {
      const e = matching[i] as LogEvent;
      bytes += Buffer.byteLength(e.message) + 26;
      if (bytes > MAX_PAGE_BYTES && page.length > 0) break;
      page.push(e);
    }
    const more = from + page.length < matching.length;
    return {
      events: page.map((e) => ({
        logStreamName: e.stream,
        timestamp: e.timestamp,
        message: e.message,
        ingestionTime: e.ingestionTime,
        eventId: e.eventId,
      })),
      searchedLogStreams: [],
      ...(more && page.length > 0
        ? { nextToken: Buffer.from((page.at(-1) as LogEvent).eventId).toString('base64url') }
        : {}),
    };
  }
}
