/**
 * The deepest nesting of objects and arrays the platform accepts in JSON it did not write (request
 * bodies, multipart metadata, webhook payloads, what user code prints). Deeper documents are refused
 * before JSON.parse builds them: recursive code further on (validation, copying, JSON.stringify of
 * a response or a stored run) would otherwise throw a RangeError, and a client's mistake would
 * become a 500. 64 levels is far beyond any real payload (docs/decisions.md).
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when `text`, read as JSON, opens more than `max` objects and arrays inside one another.
 * One linear pass over the characters, brackets inside strings ignored, no recursion and no parse:
 * it is safe on any input, valid JSON or not.
 */
export function jsonTooDeep(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
