import type { QueryKey } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
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

/** How a call ended, as the records' `status` filter takes it; `failed` is an error or a timeout. */
export type RecordStatus = 'success' | 'error' | 'timeout' | 'failed';
const STATUS_CHOICES: [RecordStatus | '', string][] = [
  ['', 'every call'],
  ['failed', 'failed (errors and timeouts)'],
  ['success', 'succeeded'],
  ['error', 'errors'],
  ['timeout', 'timeouts'],
];

/** What the caller paid for the call, or undefined where the record does not say. */
function creditsOf(record: CallRecord): number | undefined {
  return typeof record.credits === 'number' ? record.credits : undefined;
}

/**
 * The call records of a range, newest first, a page at a time (Load more follows next_cursor).
 * `showCaller` adds the calling account's id (the author side: who called your agents). A select
 * narrows them by how the call ended (the API's `status` filter, so paging stays the API's).
 */
export function CallRecords({
  queryKey,
  fetchPage,
  showCaller = false,
}: {
  queryKey: QueryKey;
  fetchPage: (
    cursor: string | undefined,
    status: RecordStatus | undefined,
  ) => Promise<{ logs: CallRecord[]; next_cursor: string | null }>;
  showCaller?: boolean;
}) {
  const [status, setStatus] = useState<RecordStatus | ''>('');
  const list = useCursorList([...queryKey, status], async (cursor) => {
    const page = await fetchPage(cursor, status || undefined);
    return { items: page.logs, next: page.next_cursor };
  });
  const filter = (
    <p class="toolbar">
      <label>
        Show{' '}
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RecordStatus | '')}>
          {STATUS_CHOICES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
    </p>
  );
  if (!list.query.isSuccess)
    return (
      <>
        {filter}
        <QueryState query={list.query} what="call records" />
      </>
    );
  if (list.items.length === 0)
    return (
      <>
        {filter}
        <p class="muted">{status ? 'No such calls in this range.' : 'No calls in this range.'}</p>
      </>
    );
  return (
    <>
      {filter}
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
