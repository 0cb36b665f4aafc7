/*
 * The Prefer request header (RFC 7240): a list of preferences, each a token with an optional
 * `=value` and `;parameters`, names compared without case. A server applies what it supports and
 * ignores the rest, naming what it applied in Preference-Applied. The call route applies one,
 * `respond-async` (docs/runs.md).
 */

export const RESPOND_ASYNC = 'respond-async';

/** The preference names in a Prefer header's value (lower case, values and parameters dropped). */
export function preferenceNames(prefer: string | undefined): Set<string> {
  const names = new Set<string>();
  if (!prefer) return names;
  // A value may be a quoted string holding commas: split outside quotes only.
  for (const preference of prefer.match(/(?:[^,"]|"(?:[^"\\]|\\.)*")+/g) ?? []) {
    const name = preference.split(/[=;]/, 1)[0]?.trim().toLowerCase();
    if (name) names.add(name);
  }
  return names;
}

/** Whether the client prefers the answer before the work is done (`Prefer: respond-async`). */
export function prefersAsync(prefer: string | undefined): boolean {
  return prefer !== undefined && preferenceNames(prefer).has(RESPOND_ASYNC);
}
