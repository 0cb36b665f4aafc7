import { useQuery } from '@tanstack/react-query';
import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AgentHostError } from '../../../sdk/src/errors.ts';
import { QueryState } from '../components/query-state.tsx';
import { formatTime } from '../format.ts';
import { pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { spanFacts } from '../span-facts.ts';
import {
  type CallTrace,
  formatSpanMs,
  layOutWaterfall,
  type TraceSpan,
  type WaterfallRow,
} from '../trace-waterfall.ts';

/** What an outline span is, in the words its row carries. */
const OUTLINE = 'outline (another author’s agent: timing and outcome only)';

/**
 * `#/agents/<id>/calls/<request_id>/trace` (GET /agents/{id}/calls/{request_id}/trace): a call's
 * trace as a waterfall, one row per span under its parent, each with a bar placed by its start and
 * sized by its duration on the trace's whole extent, its status and the facts worth seeing; a row
 * opens to show every attribute. Linked from the agent's log lines and from the playground's answer.
 */
export function CallTracePage({ agentId, requestId }: { agentId: string; requestId: string }) {
  const { client } = useSession();
  const trace = useQuery({
    queryKey: ['call-trace', agentId, requestId],
    queryFn: () => client.agents.callTrace(agentId, requestId),
  });
  // Reached from low on the agent's page (its logs, the playground's answer): start at the top.
  useEffect(() => window.scrollTo(0, 0), []);
  const notFound = trace.error instanceof AgentHostError && trace.error.code === 'NOT_FOUND';

  return (
    <div class="call-trace">
      <p>
        <a href={pageHref('/agents', agentId)}>← The agent</a>
      </p>
      <h1>
        Trace of call <code>{requestId}</code>
      </h1>
      {notFound ? (
        <div class="notice" data-testid="trace-not-found">
          <p>
            <strong>No trace you may see for this call.</strong>
          </p>
          <p class="muted">
            A call’s trace is shown to whoever made the call and to the owners of the agent’s workspace, for
            30 days (it is kept with the call’s record). This request id names no call of this agent that is
            yours to see, or the platform records no traces (<code>PLATFORM_TRACES=off</code>).
          </p>
        </div>
      ) : (
        <QueryState query={trace} what="the trace" />
      )}
      {trace.data && <TraceView trace={trace.data} />}
    </div>
  );
}

function TraceView({ trace }: { trace: CallTrace }) {
  const waterfall = useMemo(() => layOutWaterfall(trace.spans), [trace.spans]);
  const errors = trace.spans.filter((s) => s.status === 'error').length;
  return (
    <>
      <dl class="facts" data-testid="trace-facts">
        <dt>Trace id</dt>
        <dd>
          <code>{trace.trace_id}</code>
        </dd>
        <dt>Started</dt>
        <dd>
          {waterfall.startedAt ? (
            <time dateTime={waterfall.startedAt}>{formatTime(waterfall.startedAt)}</time>
          ) : (
            '—'
          )}
        </dd>
        <dt>Whole extent</dt>
        <dd>{formatSpanMs(waterfall.extentMs)}</dd>
        <dt>Spans</dt>
        <dd>
          {trace.spans.length}
          {errors > 0 && <span class="bad">, {errors} failed</span>}
        </dd>
      </dl>
      {(trace.hidden_spans > 0 || trace.dropped_spans > 0) && (
        <ul class="trace-missing" data-testid="trace-missing">
          {trace.hidden_spans > 0 && (
            <li>
              {spans(trace.hidden_spans)} hidden: the work of calls shown in outline, and their sub-calls, is
              their authors’ to see.
            </li>
          )}
          {trace.dropped_spans > 0 && (
            <li>
              {spans(trace.dropped_spans)} dropped: past the most a call keeps with its record (they went to
              the platform’s trace exporter, if any).
            </li>
          )}
        </ul>
      )}
      {waterfall.rows.length === 0 ? (
        <p>This trace has no spans.</p>
      ) : (
        <Rows rows={waterfall.rows} extentMs={waterfall.extentMs} />
      )}
    </>
  );
}

function spans(n: number): string {
  return `${n.toLocaleString()} ${n === 1 ? 'span' : 'spans'}`;
}

function Rows({ rows, extentMs }: { rows: WaterfallRow[]; extentMs: number }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <>
      {/* Outside the table: a caption is as wide as its table, which scrolls sideways on a phone. */}
      <p class="muted" id="waterfall-hint">
        One row per span, each under the span it ran in; open a span for its attributes.
      </p>
      <div class="table-scroll">
        <table class="waterfall" data-testid="trace-waterfall" aria-describedby="waterfall-hint">
          <caption class="visually-hidden">The trace’s spans</caption>
          <thead>
            <tr>
              <th scope="col">Span</th>
              <th scope="col" class="timeline-heading">
                Timeline <span class="muted">(0 to {formatSpanMs(extentMs)})</span>
              </th>
              <th scope="col">Duration</th>
              <th scope="col">Status</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <SpanRow
                key={row.span.span_id}
                row={row}
                open={open.has(row.span.span_id)}
                onToggle={() => toggle(row.span.span_id)}
              />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function SpanRow({ row, open, onToggle }: { row: WaterfallRow; open: boolean; onToggle: () => void }) {
  const { span, depth } = row;
  const failed = span.status === 'error';
  const outline = span.visibility === 'outline';
  const errorType = span.attributes['error.type'];
  const attributesId = `span-${span.span_id}-attributes`;
  const endMs = row.startMs + span.duration_ms;
  return (
    <Fragment>
      <tr
        class={`span-row${failed ? ' span-failed' : ''}${outline ? ' span-outline' : ''}`}
        data-span-id={span.span_id}
        data-depth={depth}
      >
        <th scope="row" class="span-name" style={{ paddingLeft: `${0.6 + depth * 1.25}rem` }}>
          <span class="visually-hidden">Level {depth + 1}: </span>
          <button
            type="button"
            class="span-toggle"
            aria-expanded={open}
            aria-controls={attributesId}
            onClick={onToggle}
          >
            {/* The button's state is aria-expanded; the arrow is for the eye only. */}
            <span aria-hidden="true" class="toggle-mark">
              {open ? '▾' : '▸'}
            </span>{' '}
            <span class="span-label">{span.name}</span>
          </button>
        </th>
        <td class="span-timeline">
          <span class="span-track" aria-hidden="true">
            <span class="span-bar" style={{ left: `${row.offset * 100}%`, width: `${row.width * 100}%` }} />
          </span>
          <span class="visually-hidden">
            from {formatSpanMs(row.startMs)} to {formatSpanMs(endMs)}
          </span>
        </td>
        <td class="span-duration">{formatSpanMs(span.duration_ms)}</td>
        <td class={failed ? 'bad' : undefined}>
          {failed ? (
            <strong>
              error
              {errorType !== undefined && (
                <>
                  : <code>{String(errorType)}</code>
                </>
              )}
            </strong>
          ) : (
            'ok'
          )}
        </td>
        <td class="span-facts">
          {outline && <span class="outline-note">{OUTLINE}</span>}
          {spanFacts(span).map((f) => (
            <span class="span-fact" key={f.label}>
              <span class="muted">{f.label}</span> {f.value}
            </span>
          ))}
        </td>
      </tr>
      <tr id={attributesId} class="span-attributes" hidden={!open}>
        <td colSpan={5}>{open && <SpanAttributes span={span} />}</td>
      </tr>
    </Fragment>
  );
}

/** Everything the API gave about a span: its identity, its call, then its attributes as recorded. */
function SpanAttributes({ span }: { span: TraceSpan }) {
  const own: [string, string][] = [
    ['span_id', span.span_id],
    ['parent_span_id', span.parent_span_id ?? '(none: the trace’s root)'],
    ['kind', span.kind],
    ['start_time', span.start_time],
    ['duration_ms', String(span.duration_ms)],
    ['request_id', span.request_id],
    ['agent', span.agent],
    ['visibility', span.visibility === 'outline' ? OUTLINE : span.visibility],
  ];
  const attributes = Object.entries(span.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return (
    <dl class="fields" data-testid="span-attributes">
      {[...own, ...attributes.map(([k, v]) => [k, String(v)] as const)].map(([k, v], i) => (
        // An attribute may share a name with one of the span's own fields: keyed by place.
        <Fragment key={`${i}-${k}`}>
          <dt>
            <code>{k}</code>
          </dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
