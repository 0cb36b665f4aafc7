// The time range a usage query reads: its defaults and limits (retention), and its sort-key bounds.

import type { CoreDeps } from '../../ports/core-deps.ts';
import { invalidInput } from '../../shared/errors.ts';
import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS } from './usage-schemas.ts';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** Sorts after every request id (they are ASCII), so `<to>#\uffff` closes the range inclusively. */
const SK_MAX = '\uffff';

export interface Range {
  from: Date;
  to: Date;
}

export interface RangeQuery {
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * The range a query asks for, in UTC, both ends inclusive. A date `from` is its day's first
 * instant, a date `to` its last. Defaults: `to` now, `from` 7 days before `to`. `to` later than now
 * reads as now. `from` may reach back to the start of the UTC day 90 days ago (the retention).
 */
export function resolveRange(deps: CoreDeps, query: RangeQuery): Range {
  const now = deps.clock.now();
  const earliest = new Date(startOfDay(now.getTime() - MAX_RANGE_DAYS * DAY_MS));
  const issues: { field: string; message: string }[] = [];
  const retention = `must be within the last ${MAX_RANGE_DAYS} days (not before ${earliest.toISOString()}); older calls are not kept`;

  let to = now;
  if (query.to !== undefined) {
    const asked = parseInstant(query.to, 'end');
    if (asked < earliest) issues.push({ field: 'query.to', message: retention });
    if (asked < now) to = asked;
  }
  let from: Date;
  if (query.from !== undefined) {
    from = parseInstant(query.from, 'start');
    if (from > now) issues.push({ field: 'query.from', message: 'must not be in the future' });
    else if (from < earliest) issues.push({ field: 'query.from', message: retention });
    else if (from > to) issues.push({ field: 'query.to', message: 'must not be before from' });
  } else {
    from = new Date(Math.max(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS, earliest.getTime()));
  }
  if (issues.length > 0) throw invalidInput(issues);
  return { from, to };
}

function parseInstant(value: string, end: 'start' | 'end'): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const day = Date.parse(`${value}T00:00:00.000Z`);
    return new Date(end === 'start' ? day : day + DAY_MS - 1);
  }
  return new Date(Date.parse(value));
}

export const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
export const startOfHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

export const rangeOut = (range: Range) => ({ from: range.from.toISOString(), to: range.to.toISOString() });

export function skBounds(range: Range): [string, string] {
  return [range.from.toISOString(), `${range.to.toISOString()}#${SK_MAX}`];
}
