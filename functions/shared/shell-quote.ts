/** One argument for /bin/sh: single-quoted, with each `'` written as `'\''`. Nothing inside is special. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
