import * as z from 'zod';

/*
 * The shapes of the platform's settings as the environment gives them (strings), shared by the
 * configuration schema (config.ts) and its groups (trace-settings.ts).
 */

/** A whole number from min to max. */
export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** An optional setting: a non-empty string, a URL, or an ARN or key id. */
export const text = () => z.string().min(1).optional();
export const url = () => z.url().optional();
export const arn = () => z.string().min(1).max(2048).optional();

/** An optional comma-separated list of TCP ports (`5432,6379`), as numbers. */
export const portList = () =>
  z
    .string()
    .regex(/^\s*\d{1,5}\s*(,\s*\d{1,5}\s*)*$/, 'must be a comma-separated list of TCP ports, e.g. 5432,6379')
    .refine(
      (v) => v.split(',').every((p) => Number(p) >= 1 && Number(p) <= 65535),
      'every port must be 1-65535',
    )
    .optional()
    .transform((v) => csv(v).map(Number));

/** A comma-separated list, its items trimmed, empty ones left out. */
export function csv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}
