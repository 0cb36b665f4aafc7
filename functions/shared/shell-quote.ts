/** One argument for /bin/sh: single-quoted, with each `'` written as `'\''`. Nothing inside is special. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A word of a command printed for a person to copy: as it is when the shell reads it so (letters,
 * digits, `@%+=:,./-_`), else single-quoted as shellQuote does, so a path with spaces or quotes
 * still runs as copied.
 */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : shellQuote(value);
}
