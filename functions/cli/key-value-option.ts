/**
 * Repeatable `--env KEY=VALUE` flags: gathered into one object as commander parses them, so a
 * value without `=` is a usage error at once. Values may contain `=` (only the first one splits).
 */
import { InvalidArgumentError } from 'commander';

export function collectKeyValue(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('must be KEY=VALUE');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** Repeatable flags gathered into a list (--secret A --secret B). */
export function collectList(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
