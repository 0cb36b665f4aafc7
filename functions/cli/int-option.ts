import { CliError, EXIT } from './cli-errors.ts';

/**
 * A whole number given on the command line (--limit, --credits), checked before any request so a
 * typo is a usage error (exit 2) with the range, not a 400 from the platform or a NaN sent to it.
 */
export function parseIntOption(flag: string, text: string, range: { min: number; max?: number }): number {
  const n = /^-?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  const inRange = Number.isSafeInteger(n) && n >= range.min && (range.max === undefined || n <= range.max);
  if (!inRange)
    throw new CliError(
      `${flag} must be a whole number ${range.max === undefined ? `of at least ${range.min}` : `from ${range.min} to ${range.max}`}, not ${JSON.stringify(text)}`,
      EXIT.usage,
    );
  return n;
}
