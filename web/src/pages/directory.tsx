import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { priceOf } from '../agent-record.ts';
import { ApiError } from '../api-error.tsx';
import { JsonView } from '../components/json-view.tsx';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import type { PageProps } from '../page-links.ts';
import { pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';

type AgentType = 'prompt' | 'tool' | 'agent' | 'skill';
interface Filters {
  q: string;
  tag: string;
  type: '' | AgentType;
}

/** `#/directory`: the public agents; `#/directory/<org>/<name>/<version>`: one, with fork. */
export function Directory({ params }: PageProps) {
  const [org, name, version] = params;
  return org && name && version ? (
    <PublicAgent key={params.join('/')} org={org} name={name} version={version} />
  ) : (
    <DirectoryList />
  );
}

/**
 * GET /public/agents: the newest live version of every public agent, searched by text in its
 * org/name or description (`q`), a tag and a type, paged.
 */
function DirectoryList() {
  const { client } = useSession();
  const [draft, setDraft] = useState<Filters>({ q: '', tag: '', type: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const list = useOffsetList(['directory', filters], async (page) => {
    const { agents, total } = await client.public.list({
      ...(filters.q ? { q: filters.q } : {}),
      ...(filters.tag ? { tag: filters.tag } : {}),
      ...(filters.type ? { type: filters.type } : {}),
      ...page,
    });
    return { items: agents, total };
  });
  const filterByTag = (tag: string) => {
    const next = { ...draft, tag };
    setDraft(next);
    setFilters(next);
  };
  const { items } = list;
  return (
    <div>
      <h1>Directory</h1>
      <p class="muted">
        Public agents, anyone's: call them with your key, or fork the source-available ones.
      </p>
      <form
        class="toolbar filters"
        aria-label="Search the directory"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters({ q: draft.q.trim(), tag: draft.tag.trim(), type: draft.type });
        }}
      >
        <label>
          Search{' '}
          <input
            type="search"
            value={draft.q}
            placeholder="name or description"
            onInput={(e) => setDraft({ ...draft, q: e.currentTarget.value })}
          />
        </label>
        <label>
          Tag{' '}
          <input
            type="text"
            value={draft.tag}
            onInput={(e) => setDraft({ ...draft, tag: e.currentTarget.value })}
          />
        </label>
        <label>
          Type{' '}
          <select
            value={draft.type}
            onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value as Filters['type'] })}
          >
            <option value="">Any</option>
            <option value="prompt">prompt</option>
            <option value="tool">tool</option>
            <option value="agent">agent</option>
            <option value="skill">skill</option>
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      <QueryState query={list.query} what="the directory" />
      {list.query.isSuccess && items.length === 0 && <p>No public agent matches.</p>}
      {items.length > 0 && (
        <ul class="directory-list" data-testid="directory-list">
          {items.map((a) => (
            <li key={a.id} class="card">
              <h2>
                <a href={pageHref('/directory', a.org, a.name, a.version)}>
                  {a.org}/{a.name}
                </a>{' '}
                <span class="muted">{a.version}</span>
              </h2>
              <p>{a.description}</p>
              <p class="muted">
                {a.type} · {a.execution_engine} · {priceOf(a)} ·{' '}
                {a.source_available ? 'source available' : 'server-only'}
              </p>
              {a.tags.length > 0 && (
                <p class="tags">
                  {a.tags.map((t) => (
                    <button
                      key={t}
                      type="button"
                      class="secondary tag"
                      aria-label={`Only agents tagged ${t}`}
                      onClick={() => filterByTag(t)}
                    >
                      #{t}
                    </button>
                  ))}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
      {items.length > 0 && <LoadMore list={list} />}
    </div>
  );
}

/** GET /public/agents/{org}/{agent}/{version}: details, and forking it into a workspace. */
function PublicAgent({ org, name, version }: { org: string; name: string; version: string }) {
  const { client } = useSession();
  const details = useQuery({
    queryKey: ['public-agent', org, name, version],
    queryFn: () => client.public.get(org, name, version),
  });
  const d = details.data;
  return (
    <div>
      <p>
        <a href="#/directory">← Directory</a>
      </p>
      <QueryState query={details} what="the agent" />
      {d && (
        <>
          <h1>
            {d.org}/{d.name} <span class="muted">{d.version}</span>
          </h1>
          <p>{d.description}</p>
          <dl class="facts">
            <dt>Type</dt>
            <dd>{d.type}</dd>
            <dt>Engine</dt>
            <dd>{d.execution_engine}</dd>
            <dt>Run mode</dt>
            <dd>{d.run_mode}</dd>
            <dt>Price</dt>
            <dd>{priceOf(d)}</dd>
            <dt>Providers</dt>
            <dd>{d.supported_providers.join(', ')}</dd>
            <dt>Tags</dt>
            <dd>{d.tags.length > 0 ? d.tags.join(', ') : '—'}</dd>
            <dt>Call it</dt>
            <dd>
              <code>
                POST /{d.org}/{d.name}/{d.version}/{d.default_endpoint}
              </code>
            </dd>
          </dl>
          <section aria-labelledby="fork-heading">
            <h2 id="fork-heading">Fork</h2>
            {d.source_available ? (
              <ForkForm agentId={d.id} name={d.name} />
            ) : (
              <p>
                Only source-available agents can be forked; this one is{' '}
                {d.paid ? 'paid (it runs on the platform only)' : 'server-only'}.
              </p>
            )}
          </section>
          <section aria-labelledby="public-schemas-heading">
            <h2 id="public-schemas-heading">Schemas</h2>
            <h3>Input schema</h3>
            {d.input_schema ? <JsonView value={d.input_schema} /> : <p class="muted">None.</p>}
            <h3>Output schema</h3>
            {d.output_schema ? <JsonView value={d.output_schema} /> : <p class="muted">None.</p>}
          </section>
          {'manifest' in d && d.manifest && (
            <section aria-labelledby="public-manifest-heading">
              <h2 id="public-manifest-heading">Manifest</h2>
              <JsonView value={d.manifest} />
            </section>
          )}
        </>
      )}
    </div>
  );
}

/**
 * POST /agents/{id}/fork: a copy, as v1 of a new agent, in a workspace the caller owns (the chosen
 * one when the caller owns it), under a new name if given. The copy is private.
 */
function ForkForm({ agentId, name }: { agentId: string; name: string }) {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const workspaces = useQuery({ queryKey: ['workspaces'], queryFn: () => client.workspaces.list() });
  const owned = (workspaces.data?.workspaces ?? []).filter((w) => w.role === 'owner');
  const [target, setTarget] = useState('');
  const [newName, setNewName] = useState('');
  const chosen = target || (owned.some((w) => w.id === workspaceId) ? workspaceId : (owned[0]?.id ?? ''));
  const fork = useMutation({
    mutationFn: () =>
      client.agents.fork(agentId, {
        workspace_id: chosen,
        ...(newName.trim() ? { new_name: newName.trim() } : {}),
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['agents'] }),
  });
  if (!workspaces.data) return <QueryState query={workspaces} what="your workspaces" />;
  if (owned.length === 0) return <p>You own no workspace to fork it into.</p>;
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        fork.mutate();
      }}
    >
      <label>
        Into workspace
        <select value={chosen} onChange={(e) => setTarget(e.currentTarget.value)}>
          {owned.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
              {w.personal ? ' (personal)' : ''}
            </option>
          ))}
        </select>
      </label>
      <label>
        New name (optional)
        <input
          type="text"
          value={newName}
          placeholder={name}
          aria-describedby="fork-name-hint"
          onInput={(e) => setNewName(e.currentTarget.value)}
        />
      </label>
      <small id="fork-name-hint" class="muted">
        Lowercase letters, digits and hyphens; by default the same name. A name already taken there is
        refused.
      </small>
      <div>
        <button type="submit" disabled={fork.isPending}>
          {fork.isPending ? 'Forking…' : 'Fork'}
        </button>
      </div>
      {fork.isError && <ApiError error={fork.error} title="Fork" />}
      {fork.data && (
        <p class="shown-once" role="status" data-testid="fork-result">
          Forked as <a href={pageHref('/agents', fork.data.id)}>{fork.data.ref}</a> (private).
        </p>
      )}
    </form>
  );
}
