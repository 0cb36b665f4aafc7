/**
 * Paging of log lines, newest first, for every log the platform serves (agent execution logs in the
 * store, service logs in the store locally or in CloudWatch Logs on AWS). A source only has to read
 * "the newest N lines within [since, until] at or above a level"; the cursor is built here, from
 * the oldest line's timestamp and how many lines at that very millisecond were already returned,
 * so it means the same whatever the source (CloudWatch has no sort key to resume from).
 */
import type { Item, Store } from '../../ports/store.ts';
import { invalidInput } from '../../shared/errors.ts';
import { sizedPage } from '../payloads/answer-page.ts';
import { atLeast, type LogLevel, type LogLine, type LogPage, type LogsQuery } from './log-schemas.ts';

export interface LogRange {
  since?: string;
  until?: string;
  level?: LogLevel;
  limit: number;
}

/** Reads the newest `limit` lines within [since, until] (inclusive) at or above `level`, newest first. */
export type LogReader = (range: LogRange) => Promise<LogLine[]>;

/** The page `query` asks for: its filters, then the lines older than its cursor. */
export async function readLogPage(read: LogReader, query: LogsQuery): Promise<LogPage> {
  const after = query.cursor === undefined ? undefined : decodeLogCursor(query.cursor);
  const since = query.since === undefined ? undefined : new Date(query.since).toISOString();
  let until = query.until === undefined ? undefined : new Date(query.until).toISOString();
  if (after && (until === undefined || after.until <= until)) until = after.until;
  // Lines at the cursor's own millisecond that the previous pages returned.
  const skip = after && until === after.until ? after.skip : 0;
  if (since !== undefined && until !== undefined && until < since) return { logs: [], next_cursor: null };

  const lines = await read({ since, until, level: query.level, limit: query.limit + skip + 1 });
  let dropped = 0;
  while (dropped < skip && lines[dropped]?.timestamp === until) dropped++;
  const rest = lines.slice(dropped);
  // 5,000 lines of up to 16 KiB are 80 MB: a page also stops at what a Lambda response carries,
  // and the cursor then resumes after its last line.
  const logs = sizedPage(rest.slice(0, query.limit), 0, rest.length).page;
  const last = logs.at(-1);
  if (rest.length <= logs.length || !last) return { logs, next_cursor: null };
  const sameMillisecond = logs.filter((l) => l.timestamp === last.timestamp).length;
  return {
    logs,
    next_cursor: encodeLogCursor({
      until: last.timestamp,
      skip: sameMillisecond + (last.timestamp === until ? dropped : 0),
    }),
  };
}

/**
 * A reader over log items kept in the store under one partition, sort keys `LOG#<ISO time>#…`
 * (agent versions' execution logs, local services' app logs).
 */
export function storeLogReader(store: Store, pk: string, toLine: (item: Item) => LogLine): LogReader {
  return async ({ since, until, level, limit }) => {
    const out: LogLine[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.query({
        pk,
        sk: { between: [`LOG#${since ?? ''}`, `LOG#${until ?? '~'}~`] },
        reverse: true,
        limit: 1000,
        cursor,
      });
      for (const item of page.items) {
        const line = toLine(item);
        if (!atLeast(line.level, level)) continue;
        out.push(line);
        if (out.length >= limit) break;
      }
      cursor = out.length >= limit ? undefined : page.cursor;
    } while (cursor);
    return out;
  };
}

interface LogCursor {
  until: string;
  skip: number;
}

/**
 * The most lines of one millisecond a cursor may step over: far above what a millisecond holds (a
 * call's tool lines share one), low enough that a forged cursor cannot make a page read millions.
 */
const MAX_SKIP = 10_000;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function encodeLogCursor(c: LogCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c }), 'utf8').toString('base64url');
}

function decodeLogCursor(cursor: string): LogCursor {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (
      c.v === 1 &&
      typeof c.until === 'string' &&
      TIMESTAMP.test(c.until) &&
      Number.isInteger(c.skip) &&
      (c.skip as number) >= 0 &&
      (c.skip as number) <= MAX_SKIP
    )
      return { until: c.until, skip: c.skip as number };
  } catch {
    // falls through to the error below
  }
  throw invalidInput([{ field: 'query.cursor', message: 'is not a next_cursor of a previous page' }]);
}
