import { Fragment } from 'preact';
import { priceOf, visibilityOf } from '../agent-record.ts';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import type { PageProps } from '../page-links.ts';
import { pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { AgentVersionPage } from './agent-version.tsx';
import { CallTracePage } from './call-trace.tsx';

/**
 * `#/agents`: the workspace's agents and their versions; `#/agents/<id>`: one version;
 * `#/agents/<id>/calls/<request_id>/trace`: one call's trace, the API's path for it.
 */
export function Agents({ params }: PageProps) {
  const [id, calls, requestId, trace] = params;
  if (id && calls === 'calls' && requestId && trace === 'trace' && params.length === 4)
    return <CallTracePage key={`${id}/${requestId}`} agentId={id} requestId={requestId} />;
  return id ? <AgentVersionPage key={id} id={id} /> : <AgentList />;
}

/**
 * The chosen workspace's agent versions (GET /agents?workspace_id=…, paged), grouped under each
 * agent's name: the API lists versions sorted by org, name and newest version first, so a group
 * stays together across pages.
 */
function AgentList() {
  const { client, workspaceId } = useSession();
  const list = useOffsetList(['agents', workspaceId], async (page) => {
    const { agents, total } = await client.agents.list({ workspace_id: workspaceId, ...page });
    return { items: agents, total };
  });
  const { items } = list;
  return (
    <div>
      <h1>Agents</h1>
      <p class="muted">
        The agents published into this workspace, every live version. Publish with{' '}
        <code>agenthost publish</code>; find others' in the <a href="#/directory">directory</a>.
      </p>
      <QueryState query={list.query} what="agents" />
      {list.query.isSuccess && items.length === 0 && <p>No agents in this workspace yet.</p>}
      {items.length > 0 && (
        <div class="table-scroll">
          <table data-testid="agent-list">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Type</th>
                <th scope="col">Engine</th>
                <th scope="col">Visibility</th>
                <th scope="col">Price</th>
                <th scope="col">Status</th>
                <th scope="col">Published</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a, i) => {
                const agentName = `${a.org}/${a.name}`;
                const first = i === 0 || `${items[i - 1]?.org}/${items[i - 1]?.name}` !== agentName;
                return (
                  <Fragment key={a.id}>
                    {first && (
                      <tr class="group-row">
                        <th scope="colgroup" colSpan={7}>
                          {agentName} <span class="muted">{a.description}</span>
                        </th>
                      </tr>
                    )}
                    <tr>
                      <td>
                        <a href={pageHref('/agents', a.id)} aria-label={`${agentName} ${a.version}`}>
                          {a.version}
                        </a>
                      </td>
                      <td>{a.type}</td>
                      <td>{a.execution_engine}</td>
                      <td>{visibilityOf(a)}</td>
                      <td>{priceOf(a)}</td>
                      <td>{a.status}</td>
                      <td>
                        <time dateTime={a.created_at}>{formatTime(a.created_at)}</time>
                      </td>
                    </tr>
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {items.length > 0 && <LoadMore list={list} />}
    </div>
  );
}
