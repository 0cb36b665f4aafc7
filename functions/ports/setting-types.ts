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

/** A comma-separated list, its items trimmed, empty ones left out. */
export function csv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}
