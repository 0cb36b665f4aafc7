import type { AgentHostClient } from './api-client.ts';

/** A call's trace as GET /agents/{id}/calls/{request_id}/trace answers it. */
export type CallTrace = Awaited<ReturnType<AgentHostClient['agents']['callTrace']>>;
export type TraceSpan = CallTrace['spans'][number];

/** One row of the waterfall: a span, how deep it sits in the tree, and where its bar goes. */
export interface WaterfallRow {
  span: TraceSpan;
  /** 0 for a span whose parent is not in the trace (the call's own span), 1 under it, and so on. */
  depth: number;
  /** Its start after the trace's first, as a share (0 to 1) of the whole extent. */
  offset: number;
  /** Its duration as a share (0 to 1) of the whole extent. */
  width: number;
  /** Its start after the trace's first, in ms. */
  startMs: number;
}

export interface Waterfall {
  rows: WaterfallRow[];
  /** From the first span's start to the last one's end, in ms. */
  extentMs: number;
  /** The first span's start (ISO), or undefined for a trace without spans. */
  startedAt: string | undefined;
}

/**
 * The spans in tree order (each under its parent, siblings by start time, as the API sorted them)
 * with their depth and their bars' geometry. The tree is built from parent_span_id rather than
 * drawn in the API's flat start order, so that a sub-call's spans sit under the tool call that
 * made it. A span whose parent is not in the answer is a root: the call's own span when the
 * caller sent a traceparent, or a call whose parent span its reader may not see.
 */
export function layOutWaterfall(spans: TraceSpan[]): Waterfall {
  if (spans.length === 0) return { rows: [], extentMs: 0, startedAt: undefined };
  const startOf = (s: TraceSpan) => Date.parse(s.start_time);
  const first = Math.min(...spans.map(startOf));
  const last = Math.max(...spans.map((s) => startOf(s) + s.duration_ms));
  // A trace of instant spans still gets bars: no division by zero.
  const extentMs = Math.max(last - first, 0.001);
  const firstSpan = spans.find((s) => startOf(s) === first);

  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const span of spans) {
    const parent = span.parent_span_id;
    if (parent === null || !ids.has(parent) || parent === span.span_id) roots.push(span);
    else children.set(parent, [...(children.get(parent) ?? []), span]);
  }

  const rows: WaterfallRow[] = [];
  const placed = new Set<string>();
  const place = (span: TraceSpan, depth: number) => {
    if (placed.has(span.span_id)) return;
    placed.add(span.span_id);
    const startMs = startOf(span) - first;
    const offset = clamp(startMs / extentMs);
    rows.push({
      span,
      depth,
      startMs,
      offset,
      width: Math.min(clamp(span.duration_ms / extentMs), 1 - offset),
    });
    for (const child of children.get(span.span_id) ?? []) place(child, depth + 1);
  };
  for (const root of roots) place(root, 0);
  // Spans in a loop of parents (a malformed answer) reach no root: shown at the top level, not lost.
  for (const span of spans) place(span, 0);
  return { rows, extentMs, startedAt: firstSpan?.start_time };
}

function clamp(share: number): number {
  return Number.isFinite(share) ? Math.min(Math.max(share, 0), 1) : 0;
}

/** A span's duration in milliseconds, to a tenth under 10 ms: `0.4 ms`, `1,234 ms`. */
export function formatSpanMs(ms: number): string {
  return `${ms.toLocaleString(undefined, { maximumFractionDigits: ms < 10 ? 1 : 0 })} ms`;
}
