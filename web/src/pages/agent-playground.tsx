import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'preact/hooks';
import type { CallResult } from '../../../sdk/src/call.ts';
import { AgentHostError } from '../../../sdk/src/errors.ts';
import { defaultEndpointOf, priceOf } from '../agent-record.ts';
import type { AgentHostClient } from '../api-client.ts';
import { ApiError } from '../api-error.tsx';
import { JsonView } from '../components/json-view.tsx';
import { SchemaForm } from '../components/schema-form.tsx';
import { formatDuration, formatTime } from '../format.ts';
import { callTraceHref } from '../page-links.ts';
import {
  type FormValues,
  initialValues,
  inputFromValues,
  parseInputJson,
  schemaFields,
  valuesFromInput,
} from '../schema-fields.ts';
import { useSession } from '../session.tsx';

type Agent = Awaited<ReturnType<AgentHostClient['agents']['get']>>;

/** The response headers worth seeing after a call, in this order (those present are shown). */
const SHOWN_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Deprecation',
  'Sunset',
  'Link',
];

/** What a streamed call showed before its answer: the text so far, and a managed loop's steps. */
interface Live {
  text: string;
  steps: { kind: string; name: string; outcome: string; duration_ms: number }[];
}

interface Outcome {
  /** Measured in the browser, from sending to the answer (the server's own time is in metadata). */
  roundTripMs: number;
  result?: CallResult<Record<string, unknown>>;
  error?: unknown;
}

/**
 * Calls the version as an API client would (POST /{org}/{agent}/{version}/{endpoint} through the
 * SDK): the input from a form built from its input_schema, or as raw JSON; files go as
 * multipart/form-data (`file` or `files[]`, the input as `metadata`). It shows what came back: the
 * envelope, its warnings, the timing and the headers, or the API's error as it gave it. The call
 * is streamed (`agents.stream`, docs/calls.md "Streamed calls"): the answer shows as the model
 * writes it, and a managed loop's tool calls as they end, before the envelope. Either answer, the
 * envelope or the error, links to the call's trace.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one page component: its form, stream and answer share the component's hooks
export function AgentPlayground({ agent }: { agent: Agent }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const fields = useMemo(() => schemaFields(agent.input_schema), [agent.input_schema]);
  const [mode, setMode] = useState<'form' | 'json'>(fields.length > 0 ? 'form' : 'json');
  const [values, setValues] = useState<FormValues>(() => initialValues(agent.input_schema, fields));
  const [json, setJson] = useState('{}');
  const [files, setFiles] = useState<File[]>([]);
  const [formError, setFormError] = useState<string | null>(null);
  const [live, setLive] = useState<Live>({ text: '', steps: [] });
  const endpoint = defaultEndpointOf(agent);
  const ref = `${agent.org}/${agent.name}@${agent.version}`;
  const accepted = Array.isArray(agent.accepted_file_types) ? agent.accepted_file_types.join(', ') : null;

  const call = useMutation({
    mutationFn: async (input: Record<string, unknown>): Promise<Outcome> => {
      const started = performance.now();
      setLive({ text: '', steps: [] });
      try {
        const events = client.agents.stream<Record<string, unknown>, Record<string, unknown>>(ref, input, {
          endpoint,
          ...(files.length > 0 ? { files } : {}),
        });
        for await (const e of events) {
          if (e.type === 'delta') setLive((l) => ({ ...l, text: l.text + e.text }));
          else if (e.type === 'step') {
            const { type: _, ...step } = e;
            setLive((l) => ({ ...l, steps: [...l.steps, step] }));
          } else return { roundTripMs: performance.now() - started, result: e.result };
        }
        throw new Error('The call’s stream ended without its result');
      } catch (error) {
        return { roundTripMs: performance.now() - started, error };
      }
    },
    // The call wrote a log line (and a call record): the sections showing them read again.
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['agent-logs', agent.id] }),
  });

  const currentInput = () => (mode === 'form' ? inputFromValues(fields, values) : parseInputJson(json));

  const switchTo = (next: 'form' | 'json') => {
    if (next === mode) return;
    const parsed = currentInput();
    if ('error' in parsed) {
      setFormError(parsed.error);
      return;
    }
    setFormError(null);
    if (next === 'json') setJson(JSON.stringify(parsed.input, null, 2));
    else setValues(valuesFromInput(fields, parsed.input));
    setMode(next);
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const parsed = currentInput();
    if ('error' in parsed) {
      setFormError(parsed.error);
      return;
    }
    setFormError(null);
    call.mutate(parsed.input);
  };

  const outcome = call.data;
  return (
    <div class="playground">
      <p class="muted">
        Calls{' '}
        <code>
          POST /{ref.replace('@', '/')}/{endpoint}
        </code>{' '}
        with your key
        {agent.paid ? `; a call costs ${priceOf(agent)}` : ''}.
      </p>
      <form class="stack" onSubmit={submit} aria-label="Call the agent">
        <fieldset class="mode">
          <legend>Input as</legend>
          <label>
            <input
              type="radio"
              name="input-mode"
              checked={mode === 'form'}
              disabled={fields.length === 0}
              onChange={() => switchTo('form')}
            />{' '}
            Form
          </label>
          <label>
            <input
              type="radio"
              name="input-mode"
              checked={mode === 'json'}
              onChange={() => switchTo('json')}
            />{' '}
            Raw JSON
          </label>
        </fieldset>
        {fields.length === 0 && (
          <p class="muted">Its input_schema names no properties: write the input as a JSON object.</p>
        )}
        {mode === 'form' ? (
          <SchemaForm fields={fields} values={values} onChange={setValues} idPrefix="input" />
        ) : (
          <div class="field">
            <label for="input-json">Input (JSON object)</label>
            <textarea
              id="input-json"
              rows={8}
              spellcheck={false}
              value={json}
              onInput={(e) => setJson(e.currentTarget.value)}
            />
          </div>
        )}
        <div class="field">
          <label for="input-files">Files (optional)</label>
          <input
            id="input-files"
            type="file"
            multiple
            aria-describedby="input-files-hint"
            onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])}
          />
          <small id="input-files-hint" class="muted">
            Sent as multipart/form-data (one as <code>file</code>, several as <code>files[]</code>, the input
            as <code>metadata</code>){accepted ? `; this agent takes ${accepted}` : ''}.
          </small>
        </div>
        {formError && (
          <p class="error" role="alert">
            {formError}
          </p>
        )}
        <div>
          <button type="submit" disabled={call.isPending}>
            {call.isPending ? 'Calling…' : 'Call'}
          </button>
        </div>
      </form>
      {call.isPending && (live.text !== '' || live.steps.length > 0) && <LiveAnswer live={live} />}
      {outcome && <CallOutcome outcome={outcome} live={live} agentId={agent.id} />}
    </div>
  );
}

/** The answer as the model writes it, and the tool calls so far. */
function LiveAnswer({ live }: { live: Live }) {
  return (
    <div class="call-live" data-testid="call-live" aria-live="polite" aria-busy="true">
      <h3>Answer so far</h3>
      {live.text !== '' && <pre class="live-text">{live.text}</pre>}
      <Steps steps={live.steps} />
    </div>
  );
}

function Steps({ steps }: { steps: Live['steps'] }) {
  if (steps.length === 0) return null;
  return (
    <ol class="call-steps" data-testid="call-steps">
      {steps.map((s, i) => (
        <li key={`${i}-${s.name}`}>
          {s.kind === 'agent' ? 'Agent' : 'Tool'} <code>{s.name}</code>: {s.outcome},{' '}
          {formatDuration(s.duration_ms)}
        </li>
      ))}
    </ol>
  );
}

/**
 * The link to a call's trace, by the request id its answer gave (metadata.request_id): a refused
 * or failed call of a known agent is traced too. An error the API never answered has none, nor
 * does an answer without a trace id (a platform with traces off).
 */
function TraceLink({ agentId, requestId }: { agentId: string; requestId: string | undefined }) {
  if (!requestId) return null;
  return (
    <p>
      <a href={callTraceHref(agentId, requestId)}>View trace</a>
    </p>
  );
}

function CallOutcome({ outcome, live, agentId }: { outcome: Outcome; live: Live; agentId: string }) {
  const { result, error, roundTripMs } = outcome;
  if (!result) {
    const details = error instanceof AgentHostError ? error.details : undefined;
    return (
      <div class="call-outcome" data-testid="call-error" aria-live="polite">
        <h3>Error</h3>
        <ApiError error={error} />
        <TraceLink
          agentId={agentId}
          requestId={error instanceof AgentHostError && error.traceId ? error.requestId : undefined}
        />
        {error instanceof AgentHostError && (
          <p class="muted">
            HTTP {error.status}, {error.isRetryable ? 'retryable' : 'not retryable'}, after{' '}
            {formatDuration(roundTripMs)}
          </p>
        )}
        {details !== undefined && <JsonView value={details} testId="call-error-details" />}
      </div>
    );
  }
  const envelope = { data: result.data, warnings: result.warnings, metadata: result.metadata };
  const headers = SHOWN_HEADERS.flatMap((h) => {
    const v = result.headers.get(h);
    return v === null ? [] : [[h, v] as const];
  });
  return (
    <div class="call-outcome" data-testid="call-result" aria-live="polite">
      <h3>Answer</h3>
      <p>
        Served by {result.metadata.version} in {formatDuration(result.metadata.processing_time_ms)} on the
        platform, {formatDuration(roundTripMs)} round trip.
      </p>
      <TraceLink
        agentId={agentId}
        requestId={result.metadata.trace_id ? result.metadata.request_id : undefined}
      />
      {result.deprecation && (
        <p class="bad">
          This version is deprecated
          {result.deprecation.sunset ? `; it stops answering ${result.deprecation.sunset}` : ''}
          {result.deprecation.successor ? `; its successor is ${result.deprecation.successor}` : ''}.
        </p>
      )}
      {live.steps.length > 0 && (
        <>
          <h4>Steps</h4>
          <Steps steps={live.steps} />
        </>
      )}
      <h4>Warnings</h4>
      {result.warnings.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul data-testid="call-warnings">
          {result.warnings.map((w) => (
            <li key={`${w.code}-${w.field ?? ''}-${w.message}`}>
              <code>{w.code}</code>
              {w.field ? ` (${w.field})` : ''}: {w.message}
            </li>
          ))}
        </ul>
      )}
      <h4>Envelope</h4>
      <JsonView value={envelope} testId="call-envelope" />
      <h4>Headers</h4>
      <div class="table-scroll">
        <table data-testid="call-headers">
          <tbody>
            {headers.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  <code>{value}</code>
                  {name === 'X-RateLimit-Reset' && /^\d+$/.test(value) && (
                    <span class="muted"> ({formatTime(new Date(Number(value) * 1000).toISOString())})</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
