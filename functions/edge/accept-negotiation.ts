/*
 * Proactive negotiation on `Accept` (RFC 9110 §12.5.1, §12.4.2): which of the media types a route
 * can answer with the client prefers. Each media range the client lists has a weight (`q`, 1 when
 * not given; 0 means "not acceptable"); an offered type takes the weight of the most specific range
 * that matches it (`type/subtype` with parameters, then `type/subtype`, then `type/*`, then `*\/*`),
 * and the highest weight wins. A tie goes to the first offer, the route's default: so
 * `application/json, text/event-stream` (what MCP clients and many generic ones send) gets JSON.
 *
 * Written here rather than taken from `negotiator` (express's), which is only a transitive
 * dependency of the MCP SDK: its own parsing, which this mirrors, is about as long.
 */

/** One media range of an Accept header: `type/subtype`, its parameters and its weight. */
interface MediaRange {
  type: string;
  subtype: string;
  params: Map<string, string>;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// RFC 9110 §12.4.2: 0 to 1 with at most three decimals.
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * Splits `text` on `separator` outside quoted strings (a parameter's value may hold commas and
 * semicolons when quoted).
 */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') && value.length >= 2
    ? value.slice(1, -1).replace(/\\(.)/g, '$1')
    : value;
}

/** One element of the list, or undefined when it is not a media range (it is then ignored). */
function parseRange(element: string): MediaRange | undefined {
  const [mediaType = '', ...rawParams] = splitOutsideQuotes(element, ';');
  const slash = mediaType.indexOf('/');
  const type = mediaType.slice(0, slash).trim().toLowerCase();
  const subtype = mediaType
    .slice(slash + 1)
    .trim()
    .toLowerCase();
  if (slash < 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*'))
    return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (const raw of rawParams) {
    const eq = raw.indexOf('=');
    const name = raw.slice(0, eq).trim().toLowerCase();
    const value = unquote(raw.slice(eq + 1).trim());
    if (eq < 0 || !TOKEN.test(name)) return undefined;
    // Whatever its place among the parameters, `q` is the weight (RFC 9110 §12.4.2).
    if (name === 'q') {
      if (!QVALUE.test(value)) return undefined;
      q = Number(value);
    } else params.set(name, value.toLowerCase());
  }
  return { type, subtype, params, q };
}

/** An Accept header's media ranges, in order; the malformed ones left out. */
function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of splitOutsideQuotes(accept, ',')) {
    if (element.trim() === '') continue;
    const range = parseRange(element);
    if (range) ranges.push(range);
  }
  return ranges;
}

/** How specific a range matching `offer` is (higher is more specific), or -1 when it does not match. */
function specificity(range: MediaRange, offer: MediaRange): number {
  if (range.type === '*') return 0;
  if (range.type !== offer.type) return -1;
  if (range.subtype === '*') return 1;
  if (range.subtype !== offer.subtype) return -1;
  for (const [name, value] of range.params) if (offer.params.get(name) !== value) return -1;
  return 2 + range.params.size;
}

/** The weight `ranges` give to `offer`: that of the most specific range matching it, 0 when none does. */
function quality(ranges: MediaRange[], offer: MediaRange): number {
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const s = specificity(range, offer);
    if (s > best) {
      best = s;
      q = range.q;
    }
  }
  return q;
}

/**
 * Which of `offers` (media types such as `application/json; charset=utf-8`, the route's default
 * first) the client prefers by its Accept header: the first when the header is absent or empty, and
 * undefined when it finds none of them acceptable.
 */
export function preferredMediaType<T extends string>(
  accept: string | undefined,
  offers: readonly T[],
): T | undefined {
  if (accept === undefined || accept.trim() === '') return offers[0];
  const ranges = parseAccept(accept);
  let chosen: T | undefined;
  let best = 0;
  for (const offer of offers) {
    const parsed = parseRange(offer);
    if (!parsed) throw new Error(`Not a media type: ${offer}`);
    const q = quality(ranges, parsed);
    if (q > best) {
      best = q;
      chosen = offer;
    }
  }
  return chosen;
}

/** Whether the client finds `offer` acceptable at all (a weight above 0; any type without Accept). */
export function acceptsMediaType(accept: string | undefined, offer: string): boolean {
  return preferredMediaType(accept, [offer]) !== undefined;
}
