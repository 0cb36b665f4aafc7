import { useState } from 'preact/hooks';
import { LoadMore, useCursorList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { callTraceHref } from '../page-links.ts';
import { useSession } from '../session.tsx';

type Level = 'info' | 'warn' | 'error';

/** The API's `level` is the lowest severity returned, as log viewers filter. */
const LEVELS: { value: Level; label: string }[] = [
  { value: 'info', label: 'Everything' },
  { value: 'warn', label: 'Warnings and errors' },
  { value: 'error', label: 'Errors only' },
];

/**
 * The version's execution log (GET /agents/{id}/logs, owners only), newest first, by cursor. A
 * line written for a call links to that call's trace.
 */
export function AgentLogs({ agentId }: { agentId: string }) {
  const { client } = useSession();
  const [level, setLevel] = useState<Level>('info');
  const list = useCursorList(['agent-logs', agentId, level], async (cursor) => {
    const page = await client.agents.logs(agentId, { level, limit: 50, ...(cursor ? { cursor } : {}) });
    return { items: page.logs, next: page.next_cursor };
  });
  const { items } = list;
  return (
    <section aria-labelledby="logs-heading">
      <h2 id="logs-heading">Logs</h2>
      <div class="toolbar">
        <label>
          Level{' '}
          <select value={level} onChange={(e) => setLevel(e.currentTarget.value as Level)}>
            {LEVELS.map((l) => (
              <option key={l.value} value={l.value}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          class="secondary"
          disabled={list.query.isFetching}
          onClick={() => list.query.refetch()}
        >
          Refresh
        </button>
      </div>
      <QueryState query={list.query} what="logs" />
      {list.query.isSuccess && items.length === 0 && (
        <p>No log lines{level === 'info' ? '' : ' at this level'}.</p>
      )}
      {items.length > 0 && (
        <div class="table-scroll">
          <table data-testid="agent-logs">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Level</th>
                <th scope="col">Message</th>
                <th scope="col">Trace</th>
              </tr>
            </thead>
            <tbody>
              {items.map((line, i) => (
                <tr key={`${line.timestamp}-${i}`}>
                  <td>
                    <time dateTime={line.timestamp}>{formatTime(line.timestamp)}</time>
                  </td>
                  <td class={line.level === 'info' ? '' : 'bad'}>{line.level}</td>
                  <td class="log-message">{line.message}</td>
                  <td>
                    {line.request_id && (
                      // Named by its call: every line of a call links alike, and a list of links
                      // all called "Trace" would not say which is which.
                      <a
                        href={callTraceHref(agentId, line.request_id)}
                        aria-label={`Trace of call ${line.request_id}`}
                      >
                        Trace
                      </a>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {items.length > 0 && <LoadMore list={list} />}
    </section>
  );
}
