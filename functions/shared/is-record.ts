/*
 * The one test for "a plain JSON object" (not null, not an array) that parsers of unknown input
 * share.
 */

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
