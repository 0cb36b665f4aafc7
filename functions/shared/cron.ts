// Five-field Unix cron: strict validation, next-run computation (via croner) and
// conversion to EventBridge's six-field form. See docs/cron.md.
import { Cron } from 'croner';

export type CronFieldName = 'minute' | 'hour' | 'day of month' | 'month' | 'day of week';

export interface ParsedCron {
  /** The expression as given, trimmed. */
  source: string;
  /** Five fields separated by single spaces, names replaced by numbers; what croner is given. */
  normalized: string;
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  /** 0-6, Sunday = 0 (7 is folded into 0). */
  dayOfWeek: number[];
  /** false when the field is exactly `*`. */
  domRestricted: boolean;
  dowRestricted: boolean;
}

export type ParseCronResult = { ok: true; cron: ParsedCron } | { ok: false; message: string };

interface FieldSpec {
  name: CronFieldName;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES },
];

const MAX_EXPRESSION_LENGTH = 256;
/** Longest month lengths (February counted as 29). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

class CronError extends Error {}

function fail(field: FieldSpec, raw: string, rule: string): never {
  throw new CronError(`${field.name} field "${raw}": ${rule}`);
}

function parseValue(field: FieldSpec, raw: string, token: string): number {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < field.min || n > field.max)
      fail(field, raw, `value ${token} is out of range ${field.min}-${field.max}`);
    return n;
  }
  if (field.names) {
    const idx = field.names.indexOf(token.toUpperCase());
    if (idx >= 0) return field.name === 'month' ? idx + 1 : idx;
    fail(
      field,
      raw,
      `"${token}" is not a number (${field.min}-${field.max}) or a name (${field.names.join(', ')})`,
    );
  }
  fail(field, raw, `"${token}" is not a number in range ${field.min}-${field.max}`);
}

/** Expands one field into its sorted set of values and its name-free text. */
function parseField(field: FieldSpec, raw: string): { values: number[]; text: string } {
  if (/[?LW#+]/i.test(raw) && !field.names) {
    fail(field, raw, 'only numbers, "*", lists (,), ranges (-) and steps (/) are allowed');
  }
  const values = new Set<number>();
  const texts: string[] = [];
  for (const item of raw.split(',')) {
    if (item === '') fail(field, raw, 'empty list item');
    const slash = item.split('/');
    if (slash.length > 2) fail(field, raw, `"${item}" has more than one "/"`);
    const [base = '', stepText] = slash;
    let lo: number;
    let hi: number;
    let baseText: string;
    if (base === '*') {
      lo = field.min;
      // `*` in day of week means 0-6 (7 is only an alias of Sunday).
      hi = field.name === 'day of week' ? 6 : field.max;
      baseText = '*';
    } else {
      const dash = base.split('-');
      if (dash.length > 2 || dash.some((p) => p === ''))
        fail(field, raw, `"${base}" is not a value or a range a-b`);
      lo = parseValue(field, raw, dash[0]!);
      hi = dash.length === 2 ? parseValue(field, raw, dash[1]!) : lo;
      if (hi < lo) fail(field, raw, `range ${base} is reversed (start must not exceed end)`);
      baseText = dash.length === 2 ? `${lo}-${hi}` : `${lo}`;
      if (stepText !== undefined && dash.length === 1) {
        fail(
          field,
          raw,
          `step needs "*" or a range before "/" (e.g. */${stepText} or ${lo}-${field.max}/${stepText})`,
        );
      }
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) fail(field, raw, `step "${stepText}" is not a whole number`);
      step = Number(stepText);
      if (step === 0) fail(field, raw, 'step must be at least 1');
      if (step > hi - lo) fail(field, raw, `step ${step} is larger than the range ${lo}-${hi}`);
    }
    for (let v = lo; v <= hi; v += step) values.add(field.name === 'day of week' && v === 7 ? 0 : v);
    texts.push(stepText === undefined ? baseText : `${baseText}/${step}`);
  }
  return { values: [...values].sort((a, b) => a - b), text: texts.join(',') };
}

export function parseCron(expr: unknown): ParseCronResult {
  if (typeof expr !== 'string') return { ok: false, message: 'cron expression must be a string' };
  const source = expr.trim();
  if (source === '') return { ok: false, message: 'cron expression is empty; expected five fields' };
  if (source.length > MAX_EXPRESSION_LENGTH) {
    return { ok: false, message: `cron expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
  }
  if (source.startsWith('@')) {
    return {
      ok: false,
      message: `nicknames such as ${source.split(/\s/)[0]} are not supported; use five fields`,
    };
  }
  const parts = source.split(/\s+/);
  if (parts.length !== 5) {
    const hint =
      parts.length === 6 || parts.length === 7
        ? ' (seconds and year fields are not supported)'
        : ' (minute hour day-of-month month day-of-week)';
    return { ok: false, message: `cron expression has ${parts.length} fields; expected exactly 5${hint}` };
  }
  try {
    const parsed = FIELDS.map((f, i) => parseField(f, parts[i]!));
    const [minute, hour, dom, month, dow] = parsed as [
      (typeof parsed)[0],
      (typeof parsed)[0],
      (typeof parsed)[0],
      (typeof parsed)[0],
      (typeof parsed)[0],
    ];
    const domRestricted = parts[2] !== '*';
    const dowRestricted = parts[4] !== '*';
    // With day of week unrestricted, only day of month selects days: refuse dates that never exist.
    if (domRestricted && !dowRestricted) {
      const longest = Math.max(...month.values.map((m) => MONTH_DAYS[m - 1]!));
      if (dom.values[0]! > longest) {
        throw new CronError(
          `day of month field "${parts[2]}": day ${dom.values[0]} never occurs in the selected month(s)`,
        );
      }
    }
    return {
      ok: true,
      cron: {
        source,
        normalized: parsed.map((p) => p.text).join(' '),
        minute: minute.values,
        hour: hour.values,
        dayOfMonth: dom.values,
        month: month.values,
        dayOfWeek: dow.values,
        domRestricted,
        dowRestricted,
      },
    };
  } catch (err) {
    if (err instanceof CronError) return { ok: false, message: err.message };
    throw err;
  }
}

const IANA_AREA =
  /^(Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)(\/[A-Z][A-Za-z0-9_+-]*)+$/;
let supportedZones: Set<string> | undefined;

/**
 * IANA identifiers only: the runtime's list, 'UTC', 'Etc/UTC', and other Area/Location names the
 * runtime knows (e.g. Etc/GMT+5, Asia/Kolkata, which older ICU lists as Asia/Calcutta). Abbreviations (EST, PST, CET), POSIX-style names
 * (EST5EDT), legacy links outside the IANA areas (US/Eastern) and wrong letter case are refused,
 * even though Intl accepts them.
 */
export function isValidTimeZone(tz: unknown): boolean {
  if (typeof tz !== 'string' || tz.length === 0 || tz.length > 64) return false;
  if (tz === 'UTC' || tz === 'Etc/UTC') return true;
  supportedZones ??= new Set(Intl.supportedValuesOf('timeZone'));
  if (supportedZones.has(tz)) return true;
  if (!IANA_AREA.test(tz)) return false;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
    // Intl ignores case: 'America/New_york' resolves to 'America/New_York'; refuse the wrong spelling.
    return resolved === tz || resolved.toLowerCase() !== tz.toLowerCase();
  } catch {
    return false;
  }
}

function toParsed(cron: ParsedCron | string): ParsedCron {
  if (typeof cron !== 'string') return cron;
  const r = parseCron(cron);
  if (!r.ok) throw new RangeError(r.message);
  return r.cron;
}

/**
 * The next `count` run times strictly after `after`, in `timezone` (IANA). Day of month and day of
 * week both restricted: either matches. DST: a fixed-time job whose time falls in a spring-forward
 * gap runs once, at the first valid time after the gap (e.g. 02:30 -> 03:00); one whose time occurs
 * twice on a fall-back day runs once, at the first occurrence. Jobs with `*` or a step in minute or
 * hour keep running in real time (gap times skipped, repeated times run on both occurrences).
 */
export function nextRuns(cron: ParsedCron | string, timezone: string, after: Date, count = 1): Date[] {
  const parsed = toParsed(cron);
  if (!isValidTimeZone(timezone)) throw new RangeError(`timezone "${timezone}" is not an IANA time zone`);
  if (!Number.isInteger(count) || count < 1) return [];
  return jobFor(parsed.normalized, timezone).nextRuns(count, after);
}

/** Parsed croner jobs by expression and zone: a busy scheduler asks the same few again and again. */
const jobs = new Map<string, Cron>();
const MAX_CACHED_JOBS = 1000;

function jobFor(normalized: string, timezone: string): Cron {
  const key = `${normalized}\u0000${timezone}`;
  let job = jobs.get(key);
  if (!job) {
    job = new Cron(normalized, { timezone, mode: '5-part', domAndDow: false, fixedTimeRule: 'no-wildcard' });
    if (jobs.size >= MAX_CACHED_JOBS) jobs.delete(jobs.keys().next().value as string);
    jobs.set(key, job);
  }
  return job;
}

/** The next run strictly after `after`, or null when there is none. */
export function nextRun(cron: ParsedCron | string, timezone: string, after: Date): Date | null {
  return nextRuns(cron, timezone, after, 1)[0] ?? null;
}

/** Sorted values as a compact list: runs of 3+ consecutive values become ranges. */
function compactList(values: number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < values.length) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j++;
    if (j - i >= 2) out.push(`${values[i]}-${values[j]}`);
    else for (let k = i; k <= j; k++) out.push(`${values[k]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** `*` when the field covers its whole range, `start/step` for a progression to the end, else a list. */
function ebField(values: number[], min: number, max: number): string {
  if (values.length === max - min + 1) return '*';
  const first = values[0]!;
  if (values.length >= 3) {
    const step = values[1]! - first;
    const progression = step > 1 && values.every((v, i) => v === first + i * step);
    if (progression && values[values.length - 1]! + step > max) return `${first}/${step}`;
  }
  return compactList(values);
}

/**
 * EventBridge `cron(Minutes Hours Day-of-month Month Day-of-week Year)`. Day of week is 1-7 with
 * SUN=1 and has no steps, so it is always written as a list or ranges. Exactly one of day of month /
 * day of week is `?`. When both are restricted (Unix OR), two expressions are returned; a day
 * matching both fires both rules, so the runner must deduplicate by scheduled time.
 */
export function toEventBridge(cron: ParsedCron | string): { expressions: string[] } {
  const c = toParsed(cron);
  const minute = ebField(c.minute, 0, 59);
  const hour = ebField(c.hour, 0, 23);
  const month = ebField(c.month, 1, 12);
  const dom = ebField(c.dayOfMonth, 1, 31);
  const dow = c.dayOfWeek.length === 7 ? '*' : compactList(c.dayOfWeek.map((d) => d + 1));
  const expr = (d: string, w: string) => `cron(${minute} ${hour} ${d} ${month} ${w} *)`;
  // Either side covering every day makes the OR match every day.
  const everyDay = (c.domRestricted && dom === '*') || (c.dowRestricted && dow === '*');
  if (everyDay || (!c.domRestricted && !c.dowRestricted)) return { expressions: [expr('*', '?')] };
  if (c.domRestricted && !c.dowRestricted) return { expressions: [expr(dom, '?')] };
  if (!c.domRestricted && c.dowRestricted) return { expressions: [expr('?', dow)] };
  return { expressions: [expr(dom, '?'), expr('?', dow)] };
}
