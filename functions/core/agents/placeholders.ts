/**
 * `{{name}}` placeholders: in an llm agent's prompt_template (filled from the call's input) and in
 * a managed_loop custom tool's command (filled, shell-quoted, from the tool call's arguments).
 * The manifest checks that each one names a declared parameter.
 */
import { shellQuote } from '../../shared/shell-quote.ts';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The last text split at its placeholders, and its distinct names (see `split`). */
let lastText: string | undefined;
let lastPieces: readonly string[] = [''];
let lastNames: readonly string[] = [];

/**
 * `text` split at its placeholders: literal, name, literal, …, literal. The last text's are kept: a
 * call of a prompt agent reads its template twice (its input checked, then its prompt rendered),
 * the template every call of that agent shares.
 */
function split(text: string): void {
  if (text === lastText) return;
  const pieces: string[] = [];
  let at = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    pieces.push(text.slice(at, m.index), m[1] as string);
    at = m.index + m[0].length;
  }
  pieces.push(text.slice(at));
  lastPieces = Object.freeze(pieces);
  lastNames = Object.freeze([...new Set(pieces.filter((_, i) => i % 2 === 1))]);
  lastText = text;
}

/** The distinct `{{name}}` placeholders of a template or command, in order of appearance. */
export function placeholders(text: string): readonly string[] {
  split(text);
  return lastNames;
}

/** `text` with each `{{name}}` replaced by what `fill` gives for its name. */
export function fillPlaceholders(text: string, fill: (name: string) => string): string {
  split(text);
  const pieces = lastPieces;
  let out = pieces[0] as string;
  for (let i = 1; i < pieces.length; i += 2) out += fill(pieces[i] as string) + (pieces[i + 1] as string);
  return out;
}

/**
 * A custom tool's command with every `{{param}}` replaced by its argument, shell-quoted: strings
 * as they are, other values as JSON, a missing (optional) argument as ''. The arguments must have
 * been validated against the tool's input_schema first.
 */
export function fillCommand(command: string, args: Record<string, unknown>): string {
  return command.replace(PLACEHOLDER, (_m, name: string) => {
    const v = args[name];
    if (v === undefined || v === null) return "''";
    return shellQuote(typeof v === 'string' ? v : JSON.stringify(v));
  });
}
