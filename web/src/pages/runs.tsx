import { LoadMore, useCursorList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { type PageProps, pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { RunDetail } from './run-detail.tsx';

/**
 * `#/runs`: the calls this account started without waiting (`Prefer: respond-async`, docs/runs.md),
 * newest first; `#/runs/ID` is one run, its events as they come.
 */
export function Runs({ params }: PageProps) {
  const id = params[0];
  return id ? <RunDetail runId={id} /> : <RunList />;
}

function RunList() {
  const { client } = useSession();
  const list = useCursorList(['runs', 'list'], async (cursor) => {
    const page = await client.runs.list({ ...(cursor ? { cursor } : {}) });
    return { items: page.runs, next: page.next_cursor };
  });
  return (
    <div class="runs-page">
      <h1>Runs</h1>
      <p class="muted">
        Calls this account started without waiting for their answer (<code>Prefer: respond-async</code>, or{' '}
        <code>agenthost call --async</code>).
      </p>
      <QueryState query={list.query} what="runs" />
      {list.query.isSuccess &&
        (list.items.length === 0 ? (
          <p>No runs yet.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="runs">
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Agent</th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                    <th scope="col">Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((r) => (
                    <tr key={r.run_id}>
                      <th scope="row">
                        <a href={pageHref('/runs', r.run_id)}>
                          <code>{r.run_id.slice(-12)}</code>
                        </a>
                      </th>
                      <td>{r.agent}</td>
                      <td>{r.status}</td>
                      <td>{formatTime(r.created_at)}</td>
                      <td>{r.duration_ms === null ? '—' : `${r.duration_ms.toLocaleString()} ms`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <LoadMore list={list} />
          </>
        ))}
    </div>
  );
}
