import type { QueryKey } from '@tanstack/react-query';
import { formatCount, formatDuration, formatTime } from '../format.ts';
import { LoadMore, useCursorList } from './load-more.tsx';
import { QueryState } from './query-state.tsx';

/** A call record as both usage sides give it (docs/usage.md); the author side has no key ids. */
export interface CallRecord {
  request_id: string;
  at: string;
  caller_account_id: string;
  tenant: string | null;
  org: string;
  agent: string;
  version: string;
  endpoint: string;
  status: string;
  error_code: string | null;
  http_status: number;
  duration_ms: number;
  total_tokens: number;
  /** A record field the log schema leaves open (the gateway adds it): what the caller paid. */
  [field: string]: unknown;
}

/** What the caller paid for the call, or undefined where the record does not say. */
function creditsOf(record: CallRecord): number | undefined {
  return typeof record.credits === 'number' ? record.credits : undefined;
}

/**
 * The call records of a range, newest first, a page at a time (Load more follows next_cursor).
 * `showCaller` adds the calling account's id (the author side: who called your agents).
 */
export function CallRecords({
  queryKey,
  fetchPage,
  showCaller = false,
}: {
  queryKey: QueryKey;
  fetchPage: (cursor: string | undefined) => Promise<{ logs: CallRecord[]; next_cursor: string | null }>;
  showCaller?: boolean;
}) {
  const list = useCursorList(queryKey, async (cursor) => {
    const page = await fetchPage(cursor);
    return { items: page.logs, next: page.next_cursor };
  });
  if (!list.query.isSuccess) return <QueryState query={list.query} what="call records" />;
  if (list.items.length === 0) return <p class="muted">No calls in this range.</p>;
  return (
    <>
      <div class="table-scroll">
        <table data-testid="call-records">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Agent</th>
              {showCaller && <th scope="col">Caller (account)</th>}
              <th scope="col">Tenant</th>
              <th scope="col">Status</th>
              <th scope="col">Error code</th>
              <th scope="col">Duration</th>
              <th scope="col">Tokens</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((r) => {
              const credits = creditsOf(r);
              return (
                <tr key={r.request_id}>
                  <td>
                    <time dateTime={r.at}>{formatTime(r.at)}</time>
                  </td>
                  <td>
                    {r.org}/{r.agent}@{r.version}
                  </td>
                  {showCaller && (
                    <td>
                      <code>{r.caller_account_id}</code>
                    </td>
                  )}
                  <td>{r.tenant ?? '—'}</td>
                  <td class={r.status === 'success' ? undefined : 'bad'}>{r.status}</td>
                  <td>{r.error_code ? <code>{r.error_code}</code> : '—'}</td>
                  <td>{formatDuration(r.duration_ms)}</td>
                  <td>{formatCount(r.total_tokens)}</td>
                  <td>{credits === undefined ? '—' : formatCount(credits)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <LoadMore list={list} />
    </>
  );
}
