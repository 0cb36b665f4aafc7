/** How the dashboard writes times and amounts, in the browser's locale and time zone. */

/** A timestamp as the reader's local date and time; '—' for none. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A count with thousands separators. */
export function formatCount(n: number): string {
  return n.toLocaleString();
}

/** Milliseconds as `850 ms` or `2.4 s`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** Credits with their worth in dollars (one credit is one US cent): `1,000 credits ($10.00)`. */
export function formatCredits(credits: number): string {
  const dollars = (Math.abs(credits) / 100).toLocaleString(undefined, {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });
  return `${credits.toLocaleString()} ${Math.abs(credits) === 1 ? 'credit' : 'credits'} (${credits < 0 ? '−' : ''}$${dollars})`;
}
