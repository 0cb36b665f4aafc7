/**
 * Parsers for numeric options: a bad value is commander's usage error (exit 2, "option '--limit
 * <n>' argument 'x' is invalid"), never a NaN that reaches the API or a timer.
 */
import { InvalidArgumentError } from 'commander';

/** A whole number from `min` to `max` (--limit, --min-instances, --wait-timeout …). */
export function intArg(min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

/** A number of seconds within [min, max] (fractions allowed). */
export function seconds(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a number of seconds from ${min} to ${max}`);
    return n;
  };
}
