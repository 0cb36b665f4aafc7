/*
 * ISO 8601 times (`2026-01-31T12:34:56.789Z`) written and read in JavaScript, the same as
 * `Date.prototype.toISOString` and `Date.parse` give: V8 does both in C++ through a generic
 * formatter and date parser, at several times the cost, and a call writes and reads a few (its
 * time, its record's, its log line's, the day of its quota). The day of the last time written is
 * kept, so a time in that day costs only its hours, minutes, seconds and milliseconds. A time
 * outside what the short form holds (before year 0, after 9999, or not a time) is left to `Date`.
 */

const DAY_MS = 86_400_000;
/** The UTC day of the last time written or read here: its first ms, and its `YYYY-MM-DDT`. */
let dayStart = Number.NaN;
let dayPrefix = '';

/** `date.toISOString()`. */
export function isoString(date: Date): string {
  const ms = date.getTime();
  const inDay = ms - dayStart;
  if (!(inDay >= 0 && inDay < DAY_MS)) return newDay(date, ms);
  const h = Math.floor(inDay / 3_600_000);
  const m = Math.floor(inDay / 60_000) % 60;
  const s = Math.floor(inDay / 1000) % 60;
  const f = inDay % 1000;
  return `${dayPrefix}${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}:${s < 10 ? '0' : ''}${s}.${f < 10 ? '00' : f < 100 ? '0' : ''}${f}Z`;
}

/** `date.toISOString().slice(0, 10)`: the UTC day, YYYY-MM-DD. */
export function isoDay(date: Date): string {
  const inDay = date.getTime() - dayStart;
  if (inDay >= 0 && inDay < DAY_MS) return dayPrefix.slice(0, 10);
  return isoString(date).slice(0, 10);
}

/** Formats `date` through Date (throws its RangeError for an invalid one), and keeps its day. */
function newDay(date: Date, ms: number): string {
  const iso = date.toISOString();
  // Only the four-digit years' form (24 characters) is written here; the others always go to Date.
  if (iso.length === 24 && ms >= 0) {
    dayStart = ms - (ms % DAY_MS);
    dayPrefix = iso.slice(0, 11);
  }
  return iso;
}

/** `Date.parse(text)`. */
export function parseIsoTime(text: string): number {
  // Only the form isoString writes is read here, in a day already known; anything else goes to Date.
  if (text.length !== 24 || dayPrefix === '' || !text.startsWith(dayPrefix) || text.charCodeAt(23) !== 90)
    return Date.parse(text);
  const h = twoDigits(text, 11);
  const m = twoDigits(text, 14);
  const s = twoDigits(text, 17);
  const f = twoDigits(text, 20) * 10 + digit(text, 22);
  if (
    !(h < 24 && m < 60 && s < 60 && f >= 0) ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46
  )
    return Date.parse(text);
  return dayStart + h * 3_600_000 + m * 60_000 + s * 1000 + f;
}

/** The digit at `i` of `text`, or NaN. */
function digit(text: string, i: number): number {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : Number.NaN;
}

function twoDigits(text: string, i: number): number {
  return digit(text, i) * 10 + digit(text, i + 1);
}
