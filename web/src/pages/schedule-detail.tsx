import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import type { JsonValue } from '../../../sdk/src/generated/openapi.ts';
import { ApiError } from '../api-error.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { JsonView } from '../components/json-view.tsx';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { type Schedule, ScheduleForm } from '../components/schedule-form.tsx';
import { formatDuration, formatTime } from '../format.ts';
import { pageHref } from '../page-links.ts';
import { failureStreak, scheduleState } from '../schedule-state.ts';
import { useSession } from '../session.tsx';

type RunStatus = '' | 'success' | 'failed' | 'error' | 'timeout';

/** A stored run's fields (the API types runs as JSON objects: `fields` may select any subset). */
function text(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** An alert URL's host only: the rest may be its receiver's token. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'set';
  }
}

/**
 * One schedule: its settings and state, enable/disable, trigger now (with its input or other
 * input), edit, delete (confirmed), its run history filtered by status, and its timeline.
 */
export function ScheduleDetail({ id }: { id: string }) {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const schedule = useQuery({
    queryKey: ['schedules', workspaceId, 'one', id],
    queryFn: () => client.schedules.get(workspaceId, id),
  });
  // Every view of schedules (this one, the list, the overview), runs and timeline are stale after a change.
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['schedules', workspaceId] }),
      queryClient.invalidateQueries({ queryKey: ['schedule-runs', workspaceId, id] }),
      queryClient.invalidateQueries({ queryKey: ['schedule-events', workspaceId, id] }),
    ]);

  if (!schedule.data) {
    return (
      <div>
        <p>
          <a href={pageHref('/schedules')}>All schedules</a>
        </p>
        <h1>Schedule</h1>
        <QueryState query={schedule} what="the schedule" />
      </div>
    );
  }
  const s = schedule.data;
  return (
    <div class="schedule-detail">
      <p>
        <a href={pageHref('/schedules')}>All schedules</a>
      </p>
      <h1>
        Schedule: {s.agent}
        <span class="muted">@{s.agent_version}</span>
      </h1>
      <ScheduleActions schedule={s} refresh={refresh} />
      <ScheduleFacts schedule={s} />

      <details class="edit">
        <summary>Edit the schedule</summary>
        <ScheduleForm
          schedule={s}
          onChange={async (change) => {
            await client.schedules.update(workspaceId, s.id, change);
            await refresh();
          }}
        />
      </details>

      <RunHistory id={s.id} />
      <Timeline id={s.id} />
    </div>
  );
}

type JsonObject = { [key: string]: JsonValue };

function ScheduleActions({ schedule: s, refresh }: { schedule: Schedule; refresh: () => Promise<unknown> }) {
  const { client, workspaceId } = useSession();
  const [otherInput, setOtherInput] = useState('');
  const [inputProblem, setInputProblem] = useState<string | null>(null);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => client.schedules.update(workspaceId, s.id, { enabled }),
    onSuccess: refresh,
  });
  const trigger = useMutation({
    mutationFn: (input_data: JsonObject | undefined) =>
      client.schedules.trigger(workspaceId, s.id, input_data ? { input_data } : {}),
    onSettled: refresh,
  });
  const testAlert = useMutation({
    mutationFn: () => client.schedules.testAlert(workspaceId, s.id),
    onSettled: refresh,
  });
  const runNow = () => {
    setInputProblem(null);
    if (otherInput.trim() === '') return trigger.mutate(undefined);
    try {
      const value: unknown = JSON.parse(otherInput);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return setInputProblem('The input must be a JSON object.');
      // JSON.parse's object, not an array: a JSON object.
      trigger.mutate(value as JsonObject);
    } catch (err) {
      setInputProblem(`The input is not valid JSON: ${(err as Error).message}`);
    }
  };
  const run = trigger.data;

  return (
    <section aria-label="Actions">
      <div class="toolbar">
        <button
          type="button"
          class="secondary"
          disabled={toggle.isPending}
          onClick={() => toggle.mutate(!s.enabled)}
        >
          {s.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" disabled={trigger.isPending} onClick={runNow}>
          {trigger.isPending ? 'Running…' : 'Trigger now'}
        </button>
        {s.alert_webhook_url && (
          <button
            type="button"
            class="secondary"
            disabled={testAlert.isPending}
            onClick={() => testAlert.mutate()}
          >
            Send a test alert
          </button>
        )}
        <ConfirmButton
          label="Delete"
          title="Delete this schedule?"
          confirmLabel="Delete the schedule"
          onConfirm={async () => {
            await client.schedules.delete(workspaceId, s.id);
            window.location.hash = pageHref('/schedules');
          }}
        >
          <p>
            <strong>{s.agent}</strong> stops running{' '}
            {s.type === 'cron' ? 'on its timetable' : 'on its webhook'}
            {s.type === 'webhook' ? ', and its webhook URL stops working for good' : ''}. Its run history and
            timeline are kept.
          </p>
        </ConfirmButton>
      </div>
      <details>
        <summary>Trigger with other input</summary>
        <label class="stack-label">
          <span>Input for this run only (a JSON object; it replaces the schedule’s input data)</span>
          <textarea
            value={otherInput}
            spellcheck={false}
            onInput={(e) => setOtherInput(e.currentTarget.value)}
          />
        </label>
      </details>
      {inputProblem && (
        <p class="bad" role="alert">
          {inputProblem}
        </p>
      )}
      {toggle.isError && <ApiError error={toggle.error} title={s.enabled ? 'Not disabled' : 'Not enabled'} />}
      {trigger.isError && <ApiError error={trigger.error} title="Not triggered" />}
      {run && (
        <div class="card" data-testid="trigger-result" aria-live="polite">
          <p>
            Run <code>{run.run_id}</code>:{' '}
            <strong class={run.status === 'success' ? 'ok' : 'bad'}>{run.status}</strong> in{' '}
            {formatDuration(run.duration_ms)}
          </p>
          {run.error && <p class="bad">{run.error}</p>}
          {run.output && <JsonView value={run.output} />}
        </div>
      )}
      {testAlert.isError && <ApiError error={testAlert.error} title="Test alert" />}
      {testAlert.data && (
        <p class={testAlert.data.delivered ? 'ok' : 'bad'} aria-live="polite">
          Test alert {testAlert.data.delivered ? 'delivered' : 'not delivered'} after{' '}
          {testAlert.data.attempts} {testAlert.data.attempts === 1 ? 'attempt' : 'attempts'}
          {testAlert.data.status_code !== null ? ` (HTTP ${testAlert.data.status_code})` : ''}
          {testAlert.data.error ? `: ${testAlert.data.error}` : ''}
        </p>
      )}
    </section>
  );
}

function ScheduleFacts({ schedule: s }: { schedule: Schedule }) {
  const state = scheduleState(s);
  return (
    <dl class="facts" data-testid="schedule-facts">
      <dt>State</dt>
      <dd class={state.tone}>{state.text}</dd>
      <dt>Type</dt>
      <dd>
        {s.type === 'cron' ? (
          <>
            cron <code>{s.cron_expression}</code> in {s.timezone}
          </>
        ) : (
          'webhook (its URL was shown once, at creation)'
        )}
      </dd>
      <dt>Next run</dt>
      <dd>{s.next_run_at ? <time dateTime={s.next_run_at}>{formatTime(s.next_run_at)}</time> : '—'}</dd>
      <dt>Last run</dt>
      <dd>
        {formatTime(s.last_run_at)}
        {s.last_status ? `: ${s.last_status}` : ''} ({s.total_runs} {s.total_runs === 1 ? 'run' : 'runs'} in
        all)
      </dd>
      <dt>Failures in a row</dt>
      <dd class={s.consecutive_failures > 0 ? 'bad' : ''}>{failureStreak(s)} (then it is disabled)</dd>
      <dt>Version</dt>
      <dd>
        {s.agent_version}
        {s.pinned ? ' (pinned)' : s.auto_update ? ' (follows new versions)' : ' (stays on this version)'}
      </dd>
      <dt>Provider</dt>
      <dd>{s.provider ?? 'the agent’s default'}</dd>
      <dt>Alerts</dt>
      <dd>
        {s.alert_webhook_url
          ? `to ${hostOf(s.alert_webhook_url)} after ${s.alert_on_failure_count} failures in a row`
          : 'none (no alert webhook URL)'}
      </dd>
      <dt>Input data</dt>
      <dd>
        <JsonView value={s.input_data} />
      </dd>
    </dl>
  );
}

function RunHistory({ id }: { id: string }) {
  const { client, workspaceId } = useSession();
  const [status, setStatus] = useState<RunStatus>('');
  const runs = useOffsetList(['schedule-runs', workspaceId, id, status], async (page) => {
    const { runs: items, total } = await client.schedules.runs(workspaceId, id, {
      ...page,
      ...(status ? { status } : {}),
    });
    return { items, total };
  });
  return (
    <section aria-labelledby="runs-heading">
      <h2 id="runs-heading">Run history</h2>
      <label class="toolbar">
        <span>Status</span>
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RunStatus)}>
          <option value="">All</option>
          <option value="success">Succeeded</option>
          <option value="failed">Failed (error or timeout)</option>
          <option value="error">Error</option>
          <option value="timeout">Timeout</option>
        </select>
      </label>
      <QueryState query={runs.query} what="runs" />
      {runs.query.isSuccess &&
        (runs.items.length === 0 ? (
          <p>No {status ? `${status} ` : ''}runs yet.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="schedule-runs">
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Trigger</th>
                    <th scope="col">Status</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Version</th>
                    <th scope="col">Output or error</th>
                  </tr>
                </thead>
                <tbody>
                  {runs.items.map((r) => {
                    const error = text(r.error);
                    const out = r.output ? JSON.stringify(r.output) : '';
                    return (
                      <tr key={String(r.run_id)}>
                        <td>{formatTime(text(r.started_at))}</td>
                        <td>{text(r.trigger) ?? '—'}</td>
                        <td class={r.status === 'success' ? 'ok' : 'bad'}>{text(r.status)}</td>
                        <td>{formatDuration(typeof r.duration_ms === 'number' ? r.duration_ms : null)}</td>
                        <td>{text(r.agent_version) ?? '—'}</td>
                        <td class="clip" title={error ?? out}>
                          {error ? <span class="bad">{error}</span> : <code>{out}</code>}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <LoadMore list={runs} />
          </>
        ))}
    </section>
  );
}

function Timeline({ id }: { id: string }) {
  const { client, workspaceId } = useSession();
  const events = useOffsetList(['schedule-events', workspaceId, id], async (page) => {
    const { events: items, total } = await client.schedules.events(workspaceId, id, page);
    return { items, total };
  });
  return (
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">Timeline</h2>
      <QueryState query={events.query} what="the timeline" />
      {events.query.isSuccess && (
        <>
          <ol class="timeline" data-testid="schedule-events">
            {events.items.map((e) => (
              <li key={e.event_id}>
                <time dateTime={e.at}>{formatTime(e.at)}</time> <strong>{e.type}</strong> {e.message}
              </li>
            ))}
          </ol>
          <LoadMore list={events} />
        </>
      )}
    </section>
  );
}
