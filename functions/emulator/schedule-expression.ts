import { Cron } from 'croner';

/*
 * EventBridge Scheduler's schedule expressions, evaluated as the service does: `cron(...)` with six
 * fields (minutes hours day-of-month month day-of-week year; day of week 1-7 with SUN=1; exactly one
 * of the day fields `?`), `rate(n minutes|hours|days)` and `at(yyyy-mm-ddThh:mm:ss)`, in the
 * schedule's IANA time zone. On DST days a cron time that does not exist is skipped and a time that
 * occurs twice fires once (the service's documented behaviour, which differs from Vixie cron's).
 */

export type ScheduleExpression =
  | { kind: 'cron'; job: Cron; timezone: string }
  | { kind: 'rate'; intervalMs: number }
  | { kind: 'at'; instant: number };

export class ScheduleExpressionError extends Error {}

const MINUTE = 60_000;
const UNIT_MS: Record<string, number> = {
  minute: MINUTE,
  minutes: MINUTE,
  hour: 60 * MINUTE,
  hours: 60 * MINUTE,
  day: 24 * 60 * MINUTE,
  days: 24 * 60 * MINUTE,
};

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function parseScheduleExpression(expression: string, timezone: string): ScheduleExpression {
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (cron) return parseCron(cron[1]!, timezone);
  const rate = /^rate\((\d+)\s+([a-z]+)\)$/.exec(expression);
  if (rate) {
    const value = Number(rate[1]);
    const unit = UNIT_MS[rate[2]!];
    // The service wants the singular unit for 1 and the plural otherwise.
    const singular = rate[2]!.endsWith('s') === false;
    if (!unit || value < 1 || singular !== (value === 1)) {
      throw new ScheduleExpressionError(`Invalid Schedule Expression ${expression}.`);
    }
    return { kind: 'rate', intervalMs: value * unit };
  }
  const at = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/.exec(expression);
  if (at) {
    const [y, mo, d, h, mi, s] = at.slice(1).map(Number) as [number, number, number, number, number, number];
    const wall = Date.UTC(y, mo - 1, d, h, mi, s);
    const check = new Date(wall);
    if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
      throw new ScheduleExpressionError(`Invalid Schedule Expression ${expression}.`);
    }
    return { kind: 'at', instant: zonedToInstant(wall, timezone) };
  }
  throw new ScheduleExpressionError(`Invalid Schedule Expression ${expression}.`);
}

function parseCron(body: string, timezone: string): ScheduleExpression {
  const fields = body.trim().split(/\s+/);
  const invalid = () => new ScheduleExpressionError(`Invalid Schedule Expression cron(${body}).`);
  if (fields.length !== 6) throw invalid();
  const [minutes, hours, dom, month, dow, year] = fields as [string, string, string, string, string, string];
  // AWS: one day field is `?`, never both, never neither.
  if ((dom === '?') === (dow === '?')) throw invalid();
  try {
    const job = new Cron(`0 ${minutes} ${hours} ${dom} ${month} ${dow} ${year}`, {
      timezone,
      mode: '7-part',
      // SUN=1 ... SAT=7, as in AWS; `?` is croner's wildcard, so AND of the two day fields is exact.
      alternativeWeekdays: true,
      domAndDow: true,
      // AWS writes steps as `0/15`.
      sloppyRanges: true,
    });
    return { kind: 'cron', job, timezone };
  } catch {
    throw invalid();
  }
}

/** The first time strictly after `after` (epoch ms) the expression names, or null. */
export function nextTime(expr: ScheduleExpression, after: number, anchor: number): number | null {
  switch (expr.kind) {
    case 'at':
      return expr.instant > after ? expr.instant : null;
    case 'rate': {
      // Rates count from the anchor (the start date, or the creation), the first slot at it.
      const k = after < anchor ? 0 : Math.floor((after - anchor) / expr.intervalMs) + 1;
      return anchor + k * expr.intervalMs;
    }
    case 'cron': {
      let from = after;
      for (let guard = 0; guard < 1000; guard++) {
        const next = expr.job.nextRun(new Date(from));
        if (!next) return null;
        const t = next.getTime();
        // croner moves a time in a spring-forward gap to the gap's end (it then no longer matches
        // the fields) and runs interval jobs on both passes of a repeated hour: AWS does neither.
        if (expr.job.match(next) && !isSecondPass(t, expr.timezone)) return t;
        from = t;
      }
      return null;
    }
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in ms (local = UTC + offset). */
export function offsetAt(ms: number, timezone: string): number {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const wall = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The instant of a wall-clock time (given as if UTC) in a zone; the first one when it occurs twice. */
export function zonedToInstant(wall: number, timezone: string): number {
  const first = wall - offsetAt(wall - 3 * 3_600_000, timezone);
  if (offsetAt(first, timezone) === wall - first) return first;
  return wall - offsetAt(wall - offsetAt(wall, timezone), timezone);
}

/** Whether the wall-clock time at `ms` already occurred earlier (the second pass of a fall-back hour). */
function isSecondPass(ms: number, timezone: string): boolean {
  const now = offsetAt(ms, timezone);
  const before = offsetAt(ms - 3 * 3_600_000, timezone);
  if (before <= now) return false;
  const earlier = ms - (before - now);
  return offsetAt(earlier, timezone) === before;
}
