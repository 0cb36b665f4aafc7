import { useQuery } from '@tanstack/react-query';
import { manifestOf, priceOf, visibilityOf } from '../agent-record.ts';
import { JsonView } from '../components/json-view.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { AgentDelete } from './agent-delete.tsx';
import { AgentLogs } from './agent-logs.tsx';
import { AgentPlayground } from './agent-playground.tsx';

/**
 * `#/agents/<id>`: one version: what it is, its other versions, its schemas and manifest, the
 * playground, its logs, and deleting it.
 */
export function AgentVersionPage({ id }: { id: string }) {
  const { client } = useSession();
  const agent = useQuery({ queryKey: ['agent', id], queryFn: () => client.agents.get(id) });
  const a = agent.data;
  const versions = useQuery({
    queryKey: ['agent-versions', a?.workspace_id, a?.name],
    enabled: a !== undefined,
    queryFn: async () => {
      if (!a) return [];
      const all = [];
      for await (const v of client.agents.iterate({ workspace_id: a.workspace_id, name: a.name }, 200))
        all.push(v);
      return all;
    },
  });

  return (
    <div class="agent-version">
      <p>
        <a href="#/agents">← Agents</a>
      </p>
      <QueryState query={agent} what="the agent" />
      {a && (
        <>
          <h1>
            {a.org}/{a.name} <span class="muted">{a.version}</span>
          </h1>
          <p>{a.description}</p>
          <dl class="facts" data-testid="agent-facts">
            <dt>Type</dt>
            <dd>{a.type}</dd>
            <dt>Engine</dt>
            <dd>{a.execution_engine}</dd>
            <dt>Run mode</dt>
            <dd>{a.run_mode}</dd>
            <dt>Visibility</dt>
            <dd>{visibilityOf(a)}</dd>
            <dt>Price</dt>
            <dd>{priceOf(a)}</dd>
            <dt>Status</dt>
            <dd>{a.status}</dd>
            <dt>Source</dt>
            <dd>{a.source_available ? 'available (can be downloaded and forked)' : 'server-only'}</dd>
            <dt>Published</dt>
            <dd>
              <time dateTime={a.created_at}>{formatTime(a.created_at)}</time>
            </dd>
            {a.forked_from && (
              <>
                <dt>Forked from</dt>
                <dd>{a.forked_from}</dd>
              </>
            )}
          </dl>

          {versions.data && versions.data.length > 1 && (
            <nav aria-label="Versions" class="toolbar">
              <span>Versions:</span>
              {versions.data.map((v) => (
                <a
                  key={v.id}
                  href={pageHref('/agents', v.id)}
                  aria-current={v.id === a.id ? 'page' : undefined}
                >
                  {v.version}
                </a>
              ))}
            </nav>
          )}

          <section aria-labelledby="playground-heading">
            <h2 id="playground-heading">Playground</h2>
            {a.type === 'skill' ? (
              <p>A skill is not called on its own: agents load it (default_skills, X-Platform-Skills).</p>
            ) : (
              <AgentPlayground agent={a} />
            )}
          </section>

          <section aria-labelledby="schemas-heading">
            <h2 id="schemas-heading">Schemas</h2>
            <div class="cards">
              <div>
                <h3>Input schema</h3>
                {a.input_schema ? (
                  <JsonView value={a.input_schema} testId="input-schema" />
                ) : (
                  <p class="muted">None: any JSON object is accepted.</p>
                )}
              </div>
              <div>
                <h3>Output schema</h3>
                {a.output_schema ? (
                  <JsonView value={a.output_schema} testId="output-schema" />
                ) : (
                  <p class="muted">None: the output is not checked.</p>
                )}
              </div>
            </div>
          </section>

          <section aria-labelledby="manifest-heading">
            <h2 id="manifest-heading">Manifest</h2>
            <p class="muted">As published, with every default filled in.</p>
            <JsonView value={manifestOf(a)} testId="manifest" />
          </section>

          <AgentLogs agentId={a.id} />

          <section aria-labelledby="delete-heading">
            <h2 id="delete-heading">Delete</h2>
            <AgentDelete agent={a} />
          </section>
        </>
      )}
    </div>
  );
}
