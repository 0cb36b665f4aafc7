import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { callTraceHref, pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';

/** What the page shows of a run's events: the model's text as it comes, and each step once ended. */
interface Followed {
  text: string;
  steps: string[];
}

/**
 * One run (`#/runs/ID`): its status and timing, its answer as the model writes it (its events,
 * followed live and resumed after a drop by the SDK's runs.follow), its result once it ended, a
 * link to its trace, and a cancel while it runs.
 */
export function RunDetail({ runId }: { runId: string }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const run = useQuery({
    queryKey: ['runs', 'one', runId],
    queryFn: () => client.runs.get(runId),
    // Read again while it runs: its status and result come from the run, not its events.
    refetchInterval: (q) => (q.state.data && q.state.data.ended_at === null ? 1000 : false),
  });
  const followed = useFollowed(runId);
  const [error, setError] = useState<unknown>(null);
  const r = run.data;

  const cancel = async () => {
    setError(null);
    try {
      await client.runs.cancel(runId);
      await queryClient.invalidateQueries({ queryKey: ['runs'] });
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div class="run-detail">
      <p>
        <a href={pageHref('/runs')}>← Runs</a>
      </p>
      <QueryState query={run} what="the run" />
      {r && (
        <>
          <h1>Run of {r.agent}</h1>
          <dl class="fields">
            <dt>Status</dt>
            <dd data-testid="run-status">{r.status}</dd>
            <dt>Started</dt>
            <dd>{formatTime(r.created_at)}</dd>
            <dt>Ended</dt>
            <dd>{formatTime(r.ended_at)}</dd>
            <dt>Duration</dt>
            <dd>{r.duration_ms === null ? '—' : `${r.duration_ms.toLocaleString()} ms`}</dd>
            <dt>Request</dt>
            <dd>
              <code>{r.request_id}</code>
            </dd>
            <dt>Trace</dt>
            <dd>{r.trace_id ? <a href={callTraceHref(r.agent_id, r.request_id)}>View trace</a> : '—'}</dd>
            <dt>Webhook</dt>
            <dd data-testid="run-webhook">{r.webhook ? <code>{r.webhook.url}</code> : '—'}</dd>
          </dl>
          {error !== null && <ApiError error={error} title="Could not cancel the run" />}
          {r.ended_at === null && (
            <div class="toolbar">
              <button type="button" class="secondary" onClick={cancel}>
                Cancel run
              </button>
            </div>
          )}
          <h2>Answer</h2>
          <pre class="run-text" data-testid="run-text" aria-live="polite">
            {followed.text || (r.ended_at === null ? '…' : '')}
          </pre>
          {followed.steps.length > 0 && (
            <ul data-testid="run-steps">
              {followed.steps.map((s, i) => (
                <li key={`${i}-${s}`}>{s}</li>
              ))}
            </ul>
          )}
          {r.result && (
            <>
              <h2>Result ({r.result.status})</h2>
              <pre data-testid="run-result">{JSON.stringify(r.result.body, null, 2)}</pre>
            </>
          )}
        </>
      )}
    </div>
  );
}

/** The run's events as they come, from its first: its text and its steps. */
function useFollowed(runId: string): Followed {
  const { client } = useSession();
  const [followed, setFollowed] = useState<Followed>({ text: '', steps: [] });
  useEffect(() => {
    const stop = new AbortController();
    setFollowed({ text: '', steps: [] });
    void (async () => {
      try {
        for await (const e of client.runs.follow(runId, { signal: stop.signal })) {
          if (e.event === 'delta') setFollowed((f) => ({ ...f, text: f.text + String(e.data.text ?? '') }));
          else if (e.event === 'step')
            setFollowed((f) => ({
              ...f,
              steps: [...f.steps, `${e.data.kind} ${e.data.name}: ${e.data.outcome}`],
            }));
        }
      } catch {
        // Left (the page closed) or the run is not this account's: the run's own query says which.
      }
    })();
    return () => stop.abort();
  }, [client, runId]);
  return followed;
}
