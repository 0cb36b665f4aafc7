import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { type PageProps, pageHref } from '../page-links.ts';
import { healthTone, num, str } from '../service-view.ts';
import { useSession } from '../session.tsx';
import { ServiceDetail } from './service-detail.tsx';

/** `#/services` lists the workspace's services; `#/services/<id>` is one service. */
export function Services({ params }: PageProps) {
  return params[0] ? <ServiceDetail id={params[0]} /> : <ServiceList />;
}

function ServiceList() {
  const { client, workspaceId } = useSession();
  const list = useOffsetList(['services', workspaceId, 'list'], async (page) => {
    const { services, total } = await client.services.list(workspaceId, page);
    return { items: services, total };
  });
  return (
    <div class="services">
      <h1>Services</h1>
      <p class="muted">
        Always-on agents, deployed with <code>agenthost services deploy</code> or the API.
      </p>
      <QueryState query={list.query} what="services" />
      {list.query.isSuccess &&
        (list.items.length === 0 ? (
          <p>No services in this workspace.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="services">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Agent</th>
                    <th scope="col">State</th>
                    <th scope="col">Health</th>
                    <th scope="col">Restarts</th>
                    <th scope="col">URL</th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((s) => (
                    <tr key={s.id}>
                      <td>
                        <a href={pageHref('/services', s.id)}>{s.name}</a>
                      </td>
                      <td>
                        {s.agent}@{s.agent_version}
                      </td>
                      <td class={s.state === 'paused' ? 'bad' : ''}>
                        {s.state}
                        {str(s.paused_reason) ? ` (${str(s.paused_reason)})` : ''}
                      </td>
                      <td class={healthTone(s.health_status)}>{s.health_status}</td>
                      <td>{num(s.restart_count) ?? '—'}</td>
                      <td>
                        {s.url ? (
                          <a href={s.url} target="_blank" rel="noopener noreferrer">
                            {s.url}
                          </a>
                        ) : (
                          '—'
                        )}
                      </td>
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
