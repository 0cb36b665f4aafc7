/**
 * Text the CLI prints that others wrote (workspace and agent names, descriptions, log lines, the
 * platform's error messages) reaches a terminal, where control characters are commands: ESC starts
 * sequences that retitle the window, move the cursor or rewrite what was printed, CR overwrites a
 * line, BEL rings. So every C0 and C1 control and DEL is shown escaped, as a person can read it
 * (docs/cli.md "Output"). DEL and C1 are written `\u007f`, `\u009b`: the same text inside a JSON
 * string is still valid JSON of the same value, so --json output can pass through here too.
 */

// Unicode's Cc: U+0000-U+001F, U+007F-U+009F.
const CONTROLS = /\p{Cc}/gu;
const LAYOUT_KEPT = /[^\P{Cc}\n\t]/gu;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(c: string): string {
  const code = c.charCodeAt(0);
  const named = NAMED[c];
  if (named) return named;
  const hex = code.toString(16).padStart(2, '0');
  return code < 0x20 ? `\\x${hex}` : `\\u00${hex}`;
}

/** For a value shown on one line (a table cell, a record's value, a log line, the error line). */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/**
 * For whole blocks the CLI lays out itself (tables, pretty JSON, a completion script): newlines and
 * tabs are its layout and stay; every other control is escaped.
 */
export function escapeControlsKeepingLayout(text: string): string {
  return text.replace(LAYOUT_KEPT, escaped);
}
