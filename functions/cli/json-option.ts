import { CliError, EXIT } from './cli-errors.ts';

/** A JSON object given on the command line (--input, --metadata, --body); anything else is a usage error. */
export function parseJsonOption(flag: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `${flag} is not JSON: ${(err as Error).message}`,
      EXIT.usage,
      `quote it for the shell: ${flag} '{"key":"value"}'`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${flag} must be a JSON object`, EXIT.usage);
  return value as Record<string, unknown>;
}
