/**
 * Whole-number flags (--limit, --min-instances, --wait-timeout …), checked by commander as it
 * parses, so `--limit abc` or `--limit 0` is a usage error (exit 2) naming the range before any
 * request is sent, rather than the API's 400 or, worse, NaN in a query.
 */
import { InvalidArgumentError } from 'commander';

/** A commander argParser accepting whole numbers from `min` to `max`. */
export function intArg(min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}
