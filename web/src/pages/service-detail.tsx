import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { type FetchLogPage, LiveLogs } from '../components/live-logs.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { pageHref } from '../page-links.ts';
import { eventsOf, healthTone, names, num, type ServiceRecord, str } from '../service-view.ts';
import { useSession } from '../session.tsx';

/** How often the record (state, health, restarts, timeline) is read again while the page is open. */
const REFRESH_MS = 3000;

/**
 * One service: its state and settings, environment and secret names (never values), its timeline,
 * its live logs, and restart, update to the newest version and delete, each confirmed first.
 */
export function ServiceDetail({ id }: { id: string }) {
  const { client, workspaceId } = useSession();
  const service = useQuery({
    queryKey: ['services', workspaceId, 'one', id],
    queryFn: () => client.services.get(workspaceId, id),
    refetchInterval: (q) => (q.state.status === 'error' ? false : REFRESH_MS),
  });
  const fetchLogs: FetchLogPage = useCallback(
    (query) => client.services.logs(workspaceId, id, query),
    [client, workspaceId, id],
  );

  return (
    <div class="service-detail">
      <p>
        <a href={pageHref('/services')}>All services</a>
      </p>
      {service.data ? (
        <>
          <h1>Service: {service.data.name}</h1>
          <ServiceActions service={service.data} />
          <ServiceFacts service={service.data} />
          <section aria-labelledby="events-heading">
            <h2 id="events-heading">Timeline</h2>
            <ServiceTimeline service={service.data} />
          </section>
        </>
      ) : (
        <>
          <h1>Service</h1>
          <QueryState query={service} what="the service" />
        </>
      )}
      {!service.isError && (
        <section aria-labelledby="logs-heading">
          <h2 id="logs-heading">Logs</h2>
          <LiveLogs key={id} fetchPage={fetchLogs} />
        </section>
      )}
    </div>
  );
}

function ServiceActions({ service: s }: { service: ServiceRecord }) {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['services', workspaceId] });
  return (
    <div class="toolbar">
      <ConfirmButton
        label="Restart"
        title="Restart this service?"
        confirmLabel="Restart the service"
        onConfirm={async () => {
          await client.services.restart(workspaceId, s.id);
          await refresh();
        }}
      >
        <p>
          <strong>{s.name}</strong> stops and starts again on {s.agent_version}; requests to its URL fail
          until it is ready.{s.state === 'paused' ? ' A paused service resumes.' : ''}
        </p>
      </ConfirmButton>
      <ConfirmButton
        label="Update to the newest version"
        title="Update this service?"
        confirmLabel="Update and restart"
        onConfirm={async () => {
          await client.services.update(workspaceId, s.id);
          await refresh();
        }}
      >
        <p>
          <strong>{s.name}</strong> moves from {s.agent_version} to the newest published version of {s.agent}{' '}
          and restarts.
        </p>
      </ConfirmButton>
      <ConfirmButton
        label="Delete"
        title="Delete this service?"
        confirmLabel="Delete the service"
        onConfirm={async () => {
          await client.services.delete(workspaceId, s.id);
          await refresh();
          window.location.hash = pageHref('/services');
        }}
      >
        <p>
          <strong>{s.name}</strong> stops for good and its URL stops answering.
        </p>
      </ConfirmButton>
    </div>
  );
}

function ServiceFacts({ service: s }: { service: ServiceRecord }) {
  const env = names(s.env);
  const secrets = names(s.secrets);
  const lastError = str(s.last_error);
  const restarts = num(s.restart_count);
  const streak = num(s.consecutive_restart_failures);
  const maxFailures = num(s.max_restart_failures);
  return (
    <dl class="facts" data-testid="service-facts">
      <dt>State</dt>
      <dd class={s.state === 'paused' ? 'bad' : ''}>
        {s.state}
        {str(s.paused_reason) ? ` (${str(s.paused_reason)})` : ''}
      </dd>
      <dt>Health</dt>
      <dd class={healthTone(s.health_status)}>{s.health_status}</dd>
      <dt>Restarts</dt>
      <dd>
        {restarts ?? '—'} in all; {streak ?? 0} failed in a row
        {maxFailures !== null ? ` (paused at ${maxFailures})` : ''}
      </dd>
      <dt>URL</dt>
      <dd>
        {s.url ? (
          <a href={s.url} target="_blank" rel="noopener noreferrer">
            {s.url}
          </a>
        ) : s.http === false ? (
          'none (outbound only)'
        ) : (
          '—'
        )}
      </dd>
      <dt>Agent</dt>
      <dd>
        {s.agent}@{s.agent_version}
        {s.auto_update === true ? ' (follows new versions)' : ' (stays on this version)'}
      </dd>
      <dt>Command</dt>
      <dd>{str(s.command) ? <code>{str(s.command)}</code> : 'found by the runner'}</dd>
      <dt>Instances</dt>
      <dd>
        {num(s.min_instances) ?? '—'} to {num(s.max_instances) ?? '—'}
      </dd>
      <dt>Deployed</dt>
      <dd>{formatTime(str(s.deployed_at))}</dd>
      <dt>Last restart</dt>
      <dd>{formatTime(str(s.last_restart_at))}</dd>
      {lastError && (
        <>
          <dt>Last error</dt>
          <dd class="bad">{lastError}</dd>
        </>
      )}
      <dt>Environment variables</dt>
      <dd data-testid="service-env">
        {env.length ? env.map((n) => <code key={n}>{n} </code>) : 'none'}
        {env.length > 0 && <span class="muted"> (names only)</span>}
      </dd>
      <dt>Secrets</dt>
      <dd data-testid="service-secrets">
        {secrets.length ? secrets.map((n) => <code key={n}>{n} </code>) : 'none'}
        {secrets.length > 0 && <span class="muted"> (names only; values stay in the vault)</span>}
      </dd>
    </dl>
  );
}

function ServiceTimeline({ service }: { service: ServiceRecord }) {
  const events = eventsOf(service);
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol class="timeline" data-testid="service-events">
      {events.map((e) => (
        <li key={e.event_id}>
          <time dateTime={e.at}>{formatTime(e.at)}</time> <strong>{e.type}</strong> {e.message}
        </li>
      ))}
    </ol>
  );
}
