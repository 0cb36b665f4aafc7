import type { UseQueryResult } from '@tanstack/react-query';
import { ApiError } from '../api-error.tsx';

/**
 * A query's loading and error states, the same on every page: a polite "Loading …" line while it
 * runs, the API's error (code and message) if it failed; nothing once it has data.
 */
export function QueryState({
  query,
  what,
}: {
  query: Pick<UseQueryResult, 'isPending' | 'isError' | 'error'>;
  what: string;
}) {
  if (query.isError) return <ApiError error={query.error} title={`Could not load ${what}`} />;
  if (query.isPending) return <p aria-live="polite">Loading {what}…</p>;
  return null;
}
